package gateway

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
)

// readMultipart streams a multipart body: fields become name/value pairs, file
// parts go to temp files (a PHP worker gets paths, as with FPM). The caller
// removes the files once the job is answered, whatever happened.
func readMultipart(r *http.Request, tmpDir string) (form [][2]string, files []upload, err error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil, err
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return form, files, nil
		}
		if err != nil {
			return form, files, err
		}
		name := part.FormName()
		if name == "" {
			part.Close()
			continue
		}
		if part.FileName() == "" {
			v, err := io.ReadAll(part)
			part.Close()
			if err != nil {
				return form, files, err
			}
			form = append(form, [2]string{name, string(v)})
			continue
		}
		f, err := os.CreateTemp(tmpDir, "ferry-upload-*")
		if err != nil {
			part.Close()
			return form, files, err
		}
		n, err := io.Copy(f, part)
		part.Close()
		f.Close()
		files = append(files, upload{field: name, name: part.FileName(), ctype: part.Header.Get("Content-Type"), path: f.Name(), size: n})
		if err != nil {
			return form, files, err
		}
	}
}

func removeUploads(files []upload) {
	for _, f := range files {
		os.Remove(f.path)
	}
}

func isMultipart(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "multipart/form-data"
}
