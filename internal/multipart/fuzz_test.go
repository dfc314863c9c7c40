package multipart

import (
	"bytes"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/textproto"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

// fuzzLimits are small so that random bodies reach every limit.
func fuzzLimits(dir string) Limits {
	return Limits{Dir: dir, MaxFiles: 3, MaxParts: 8, MaxHeaderBytes: 256,
		MaxDiskBytes: 64, MaxFieldBytes: 64, Forbid: []string{".php"}}
}

// FuzzMultipart checks the parser's promises on any body: no panic, limits
// held, no temp file left after an error, and the same answer however the
// body is cut into reads.
func FuzzMultipart(f *testing.F) {
	f.Add([]byte(mpBody(fieldPart("a", "1"), filePart("f", "dir/a.txt", "hello"))))
	f.Add([]byte(mpBody(filePart("f", "", ""), filePart("g", "z.txt", ""), fieldPart("b", "x\r\n--xYzZ"))))
	f.Add([]byte("--" + bnd + "\nContent-Disposition: form-data;\n name=\"a\"; filename=\"C:\\\\x\\\\y.bin\"\n\nv\n--" + bnd + "--"))
	f.Add([]byte(mpBody(filePart("f", "a.PHP", "x"), fieldPart("c", "long field value, long enough"))))
	dir := f.TempDir() // one for all runs: a worker runs its inputs one at a time
	f.Fuzz(func(t *testing.T, body []byte) {
		lim := fuzzLimits(dir)
		form, files, err := Read(bytes.NewReader(body), bnd, lim)
		ents, rerr := os.ReadDir(dir)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil && (len(ents) > 0 || form != nil || files != nil) {
			t.Fatalf("error %v left %d temp files, %d fields, %d files", err, len(ents), len(form), len(files))
		}
		if err == nil {
			checkUploads(t, lim, form, files, len(ents))
		}
		contents := make([]string, len(files))
		for i, u := range files {
			if u.Path != "" {
				contents[i] = readUpload(t, u)
			}
		}
		Remove(files)
		assertEmptyDir(t, dir)
		// Byte by byte, every delimiter and header line straddles a read.
		form2, files2, err2 := Read(iotest.OneByteReader(bytes.NewReader(body)), bnd, lim)
		defer Remove(files2)
		if errString(err) != errString(err2) || !reflect.DeepEqual(form, form2) || !sameUploads(t, files, contents, files2) {
			t.Fatalf("byte by byte: err %v form %q files %+v; at once: err %v form %q files %+v", err2, form2, files2, err, form, files)
		}
		Remove(files2)
		assertEmptyDir(t, dir)
	})
}

func checkUploads(t *testing.T, lim Limits, form [][2]string, files []Upload, onDisk int) {
	t.Helper()
	var nfiles int
	var disk, fields int64
	for _, u := range files {
		if u.Path == "" {
			if u.ErrCode != 4 || u.Size != 0 || u.Name != "" {
				t.Fatalf("upload without a file: %+v", u)
			}
			continue
		}
		nfiles++
		st, err := os.Stat(u.Path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != u.Size {
			t.Fatalf("%s holds %d bytes, reported %d", u.Path, st.Size(), u.Size)
		}
		disk += st.Size()
		if forbidden(u.Name, lim.Forbid) {
			t.Fatalf("forbidden name %q accepted", u.Name)
		}
	}
	for _, kv := range form {
		fields += int64(len(kv[1]))
	}
	if nfiles > lim.MaxFiles || nfiles != onDisk || disk > lim.MaxDiskBytes || fields > lim.MaxFieldBytes ||
		len(form)+len(files) > lim.MaxParts {
		t.Fatalf("%d files (%d in the dir), %d bytes on disk, %d field bytes, %d parts over %+v",
			nfiles, onDisk, disk, fields, len(form)+len(files), lim)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sameUploads compares two parses of one body: same entries, same contents.
func sameUploads(t *testing.T, a []Upload, contents []string, b []Upload) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if (x.Path == "") != (y.Path == "") || (y.Path != "" && readUpload(t, y) != contents[i]) {
			return false
		}
		x.Path, y.Path = "", ""
		if x != y {
			return false
		}
	}
	return true
}

// innerDelim and endDelim match content that would end its part early: a
// delimiter line, or at the end the start of one the writer would complete.
var (
	innerDelim = regexp.MustCompile("\n--" + bnd + "(--|[ \t]*\r?\n)")
	endDelim   = regexp.MustCompile("\n--" + bnd + "[ \t]*-?$")
)

// TestMultipartMatchesStdlibWriter parses bodies written by mime/multipart,
// with contents full of near-delimiters and reads of random sizes, so that
// delimiters straddle the parser's buffer in every way.
func TestMultipartMatchesStdlibWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"\r\n--" + bnd[:3], "\r\n--" + bnd + "x", "\n--" + bnd + "-", "\r", "\n", "--", "-", bnd, "\r\n--" + bnd + " \tz"}
	for round := 0; round < 30; round++ {
		oneByte, maxSize := round%3 == 0, 150<<10 // one-byte reads cover straddling in small bodies
		if oneByte {
			maxSize = 8 << 10
		}
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		if err := w.SetBoundary(bnd); err != nil {
			t.Fatal(err)
		}
		var wantForm [][2]string
		var wantFiles []Upload
		var contents []string
		for p := 0; p < 1+rng.IntN(6); p++ {
			var c strings.Builder
			for size := rng.IntN(maxSize); c.Len() < size; {
				if rng.IntN(3) == 0 {
					c.WriteString(pieces[rng.IntN(len(pieces))])
				} else {
					c.WriteString(strings.Repeat("d", rng.IntN(2000)))
				}
				if s := c.String(); innerDelim.MatchString(s[max(0, len(s)-64):]) {
					c.Reset()
				}
			}
			if endDelim.MatchString(c.String()) {
				c.WriteString("d")
			}
			h := textproto.MIMEHeader{}
			name := "p" + string(rune('a'+p))
			if rng.IntN(2) == 0 {
				h.Set("Content-Disposition", `form-data; name="`+name+`"`)
				wantForm = append(wantForm, [2]string{name, c.String()})
			} else {
				file := `sub\dir/"q".bin`
				h.Set("Content-Disposition", `form-data; name="`+name+`"; filename="`+strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(file)+`"`)
				h.Set("Content-Type", "application/x-test")
				wantFiles = append(wantFiles, Upload{Field: name, Name: file, Type: "application/x-test", Size: int64(c.Len())})
				contents = append(contents, c.String())
			}
			pw, err := w.CreatePart(h)
			if err != nil {
				t.Fatal(err)
			}
			pw.Write([]byte(c.String()))
		}
		w.Close()
		dir := t.TempDir()
		lim := testLimits(dir)
		lim.MaxDiskBytes, lim.MaxFieldBytes = 1<<30, 1<<30
		var src io.Reader = &randomReader{r: bytes.NewReader(buf.Bytes()), rng: rng}
		if oneByte {
			src = iotest.OneByteReader(bytes.NewReader(buf.Bytes()))
		}
		form, files, err := Read(src, bnd, lim)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !reflect.DeepEqual(form, wantForm) {
			t.Fatalf("round %d: fields differ from what was written", round)
		}
		if len(files) != len(wantFiles) {
			t.Fatalf("round %d: %d files, want %d", round, len(files), len(wantFiles))
		}
		for i, f := range files {
			if got := readUpload(t, f); got != contents[i] {
				t.Fatalf("round %d: file %d content differs (%d bytes, want %d)", round, i, len(got), len(contents[i]))
			}
			f.Path = ""
			if f != wantFiles[i] {
				t.Fatalf("round %d: file %+v, want %+v", round, f, wantFiles[i])
			}
		}
		Remove(files)
	}
}

// randomReader returns reads of random sizes, many tiny, some empty.
type randomReader struct {
	r   *bytes.Reader
	rng *rand.Rand
}

func (r *randomReader) Read(p []byte) (int, error) {
	n := r.rng.IntN(16)
	if r.rng.IntN(2) == 0 {
		n = r.rng.IntN(70 << 10)
	}
	return r.r.Read(p[:min(n, len(p))])
}
