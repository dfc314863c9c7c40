package gateway

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"os"
)

// readMultipart splits a multipart body: fields become name/value pairs, file
// parts go to temp files (a PHP app gets paths, as under FPM). The caller
// removes the files once the job is answered, whatever happened.
func readMultipart(body []byte, boundary, tmpDir string) (form [][2]string, files []upload, err error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
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

// multipartBoundary returns the boundary of a multipart/form-data body, or "".
func multipartBoundary(ct []byte) string {
	if !bytes.HasPrefix(bytes.ToLower(ct), []byte("multipart/form-data")) {
		return ""
	}
	_, params, err := mime.ParseMediaType(string(ct))
	if err != nil {
		return ""
	}
	return params["boundary"]
}
