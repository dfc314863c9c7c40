package multipart

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const bnd = "xYzZY"

// mpBody frames raw parts (header lines, empty line, content) with CRLF delimiters.
func mpBody(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("--" + bnd + "\r\n" + p + "\r\n")
	}
	b.WriteString("--" + bnd + "--\r\n")
	return b.String()
}

func fieldPart(name, value string) string {
	return `Content-Disposition: form-data; name="` + name + "\"\r\n\r\n" + value
}

// filePart takes filename as it goes on the wire, quoted-string escapes included.
func filePart(field, filename, content string) string {
	return `Content-Disposition: form-data; name="` + field + `"; filename="` + filename +
		"\"\r\nContent-Type: text/plain\r\n\r\n" + content
}

func testLimits(dir string) Limits {
	return Limits{Dir: dir, MaxFiles: 20, MaxParts: 1000, MaxHeaderBytes: 16 << 10,
		MaxDiskBytes: 1 << 20, MaxFieldBytes: 1 << 20}
}

// countingReader counts what the parser consumed.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func parseBody(body string, lim Limits) ([][2]string, []Upload, error) {
	return Read(strings.NewReader(body), bnd, lim)
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		t.Fatalf("%d temp files left in %s, first %s", len(ents), dir, ents[0].Name())
	}
}

func readUpload(t *testing.T, u Upload) string {
	t.Helper()
	b, err := os.ReadFile(u.Path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMultipartFieldsAndFilesInOrder(t *testing.T) {
	dir := t.TempDir()
	binary := "a\r\n--xYzZ\r\nb\r\n--xYzZYx\r\n--xYzZY-c\n--xYzZ\r"
	body := mpBody(
		fieldPart("a", "1"),
		filePart("f1", "one.txt", "hello"),
		fieldPart("b", ""),
		"Content-Disposition: form-data; filename=\"anon.txt\"\r\n\r\nno name: skipped",
		fieldPart("a", "2"),
		"Content-Disposition: form-data; name=\"f2\"; filename=\"two.bin\"\r\n\r\n"+binary,
		fieldPart("c", "line1\r\nline2\r\n"),
	)
	form, files, err := parseBody(body, testLimits(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer Remove(files)
	wantForm := [][2]string{{"a", "1"}, {"b", ""}, {"a", "2"}, {"c", "line1\r\nline2\r\n"}}
	if !reflect.DeepEqual(form, wantForm) {
		t.Fatalf("form = %q, want %q", form, wantForm)
	}
	if len(files) != 2 {
		t.Fatalf("files = %+v, want 2", files)
	}
	for i, want := range []struct{ field, name, ctype, content string }{
		{"f1", "one.txt", "text/plain", "hello"},
		{"f2", "two.bin", "", binary},
	} {
		f := files[i]
		if f.Field != want.field || f.Name != want.name || f.Type != want.ctype || f.ErrCode != 0 {
			t.Errorf("files[%d] = %+v, want %+v", i, f, want)
		}
		if got := readUpload(t, f); got != want.content || f.Size != int64(len(want.content)) {
			t.Errorf("files[%d] holds %q (size %d), want %q", i, got, f.Size, want.content)
		}
		st, err := os.Stat(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(f.Path) != dir || !strings.HasPrefix(filepath.Base(f.Path), "ferry-upload-") || st.Mode().Perm() != 0o600 {
			t.Errorf("files[%d] at %s mode %v, want %s/ferry-upload-* mode 0600", i, f.Path, st.Mode().Perm(), dir)
		}
	}
	Remove(files)
	assertEmptyDir(t, dir)
}

func TestMultipartKeepsFullPath(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ wire, want string }{
		{"photos/2024/a.jpg", "photos/2024/a.jpg"},
		{`C:\Users\me\b.txt`, `C:\Users\me\b.txt`}, // only \\ and \" are escapes, as in PHP
		{`say \"hi\".txt`, `say "hi".txt`},
		{`back\\slash.txt`, `back\slash.txt`},
		{"%22q%22.txt", "%22q%22.txt"}, // browsers' escapes are left to the app, as PHP does
		{"dir/résumé.pdf", "dir/résumé.pdf"},
	}
	var parts []string
	for _, c := range cases {
		parts = append(parts, filePart("u[]", c.wire, "x"))
	}
	parts = append(parts, "Content-Disposition: form-data; name=u; filename=plain/bare.txt\r\n\r\nx")
	cases = append(cases, struct{ wire, want string }{"", "plain/bare.txt"})
	_, files, err := parseBody(mpBody(parts...), testLimits(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer Remove(files)
	var got, want []string
	for i := range max(len(files), len(cases)) {
		if i < len(files) {
			got = append(got, files[i].Name)
		}
		if i < len(cases) {
			want = append(want, cases[i].want)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("file names\n%q, want\n%q", got, want)
	}
}

func TestMultipartEmptyFileInput(t *testing.T) {
	dir := t.TempDir()
	lim := testLimits(dir)
	lim.MaxFiles = 1 // unselected inputs do not count, as in PHP
	body := mpBody(
		"Content-Disposition: form-data; name=\"avatar\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n",
		filePart("other", "", "dropped, as PHP drops it"),
		filePart("zero", "zero.txt", ""),
	)
	form, files, err := parseBody(body, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer Remove(files)
	if len(form) != 0 || len(files) != 3 {
		t.Fatalf("form %q files %+v, want no field and 3 files", form, files)
	}
	for i, field := range []string{"avatar", "other"} {
		if want := (Upload{Field: field, ErrCode: 4}); files[i] != want {
			t.Errorf("files[%d] = %+v, want %+v", i, files[i], want)
		}
	}
	z := files[2]
	if z.ErrCode != 0 || z.Size != 0 || z.Name != "zero.txt" || z.Path == "" || readUpload(t, z) != "" {
		t.Errorf("empty upload = %+v, want an existing empty file without error", z)
	}
}

func TestMultipartLimits(t *testing.T) {
	first := filePart("first", "first.txt", "made before the refusal")
	bigHeader := "Content-Disposition: form-data; name=\"h\"\r\nX-Pad: " + strings.Repeat("p", 300) + "\r\n\r\nv"
	cases := []struct {
		name   string
		set    func(*Limits)
		parts  []string
		what   string // "" = must pass
		status int
	}{
		{"parts at limit", func(l *Limits) { l.MaxParts = 3 }, []string{first, fieldPart("a", "1"), fieldPart("b", "2")}, "", 0},
		{"parts", func(l *Limits) { l.MaxParts = 3 }, []string{first, fieldPart("a", "1"), fieldPart("b", "2"), fieldPart("c", "3")}, limitParts, 400},
		{"files at limit", func(l *Limits) { l.MaxFiles = 2 }, []string{first, filePart("f", "2.txt", "x")}, "", 0},
		{"files", func(l *Limits) { l.MaxFiles = 2 }, []string{first, filePart("f", "2.txt", "x"), filePart("f", "3.txt", "x")}, limitFiles, 400},
		{"no files allowed", func(l *Limits) { l.MaxFiles = 0 }, []string{fieldPart("a", "1"), filePart("f", "1.txt", "")}, limitFiles, 400},
		{"header at limit", func(l *Limits) { l.MaxHeaderBytes = len(bigHeader) - 1 }, []string{first, bigHeader}, "", 0},
		{"header", func(l *Limits) { l.MaxHeaderBytes = 256 }, []string{first, bigHeader}, limitHeader, 400},
		{"header line without end", func(l *Limits) { l.MaxHeaderBytes = 256 }, []string{first, strings.Repeat("h", 200<<10)}, limitHeader, 400},
		{"disk at limit", func(l *Limits) { l.MaxDiskBytes = 12 }, []string{filePart("a", "a", "123456"), filePart("b", "b", "123456")}, "", 0},
		{"disk", func(l *Limits) { l.MaxDiskBytes = 11 }, []string{filePart("a", "a", "123456"), filePart("b", "b", "123456")}, limitDisk, 413},
		{"disk in one big file", func(l *Limits) { l.MaxDiskBytes = 100 << 10 }, []string{filePart("a", "a", strings.Repeat("d", 300<<10))}, limitDisk, 413},
		{"fields at limit", func(l *Limits) { l.MaxFieldBytes = 12 }, []string{first, fieldPart("a", "123456"), fieldPart("b", "123456")}, "", 0},
		{"fields", func(l *Limits) { l.MaxFieldBytes = 11 }, []string{first, fieldPart("a", "123456"), fieldPart("b", "123456")}, limitFields, 413},
		{"forbid allows others", func(l *Limits) { l.Forbid = []string{".php"} }, []string{first, filePart("f", "php.txt", "x"), filePart("f", "a.phps", "x")}, "", 0},
		{"forbid", func(l *Limits) { l.Forbid = []string{".phar", ".php"} }, []string{first, filePart("f", "dir/shell.php", "<?php")}, limitExtension, 400},
		{"forbid any case", func(l *Limits) { l.Forbid = []string{".php"} }, []string{first, filePart("f", "shell.PhP", "<?php")}, limitExtension, 400},
		{"forbid trailing dot", func(l *Limits) { l.Forbid = []string{".PHP"} }, []string{first, filePart("f", `C:\x\shell.php. `, "<?php")}, limitExtension, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lim := testLimits(dir)
			c.set(&lim)
			form, files, err := parseBody(mpBody(c.parts...), lim)
			if c.what == "" {
				if err != nil {
					t.Fatal(err)
				}
				Remove(files)
				assertEmptyDir(t, dir)
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.What != c.what || le.Status() != c.status {
				t.Fatalf("err = %v, want a LimitError for %s with status %d", err, c.what, c.status)
			}
			if form != nil || files != nil {
				t.Errorf("form %q files %+v returned with the error", form, files)
			}
			assertEmptyDir(t, dir)
		})
	}
}

// TestMultipartManyTinyParts is the chunked body that once made one temp file
// per part: fasthttp's own part limit only applied with Content-Length.
func TestMultipartManyTinyParts(t *testing.T) {
	part := filePart("f[]", "a.txt", "x")
	body := mpBody(slicesRepeat(part, 20000)...)
	for _, c := range []struct {
		name     string
		maxFiles int
		what     string
	}{{"file limit", 20, limitFiles}, {"part limit", 100000, limitParts}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lim := testLimits(dir)
			lim.MaxFiles = c.maxFiles
			src := &countingReader{r: strings.NewReader(body)}
			_, files, err := Read(src, bnd, lim)
			var le *LimitError
			if !errors.As(err, &le) || le.What != c.what {
				t.Fatalf("err = %v with %d files, want a LimitError for %s", err, len(files), c.what)
			}
			assertEmptyDir(t, dir)
			// A parser that stops at once has read about MaxParts parts, plus one buffer.
			if limit := 1000*len(part) + 200<<10; src.n > limit {
				t.Errorf("read %d of %d bytes before refusing, want at most %d", src.n, len(body), limit)
			}
		})
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestMultipartMalformed(t *testing.T) {
	first := "--" + bnd + "\r\n" + filePart("first", "first.txt", strings.Repeat("made before the error ", 100)) + "\r\n"
	cases := []struct{ name, body string }{
		{"missing final boundary", first},
		{"cut in a file", first + "--" + bnd + "\r\n" + filePart("f", "b.txt", "half of it")},
		{"cut after a boundary", first + "--" + bnd},
		{"cut in headers", first + "--" + bnd + "\r\nContent-Disposition: form-data; name=\"x\"\r\n"},
		{"header without colon", first + mpBody("Content-Disposition form-data; name=\"x\"\r\n\r\nv")},
		{"header name with space", first + mpBody("Content Disposition: form-data; name=\"x\"\r\n\r\nv")},
		{"folded header", first + mpBody("Content-Disposition: form-data;\r\n name=\"x\"\r\n\r\nv")},
		{"NUL in header", first + mpBody(filePart("f", "a.php\x00.jpg", "x"))},
		{"unterminated quote", first + mpBody("Content-Disposition: form-data; name=\"x\"; filename=\"a.txt\r\n\r\nv")},
		{"text after quote", first + mpBody("Content-Disposition: form-data; name=\"x\"; filename=\"a.txt\"b\r\n\r\nv")},
		{"two filenames", first + mpBody("Content-Disposition: form-data; name=\"x\"; filename=\"a.txt\"; filename=\"a.php\"\r\n\r\nv")},
		{"two names", first + mpBody("Content-Disposition: form-data; name=\"x\"; name=\"y\"\r\n\r\nv")},
		{"no boundary at all", "just some bytes\r\n"},
		{"padding fills the buffer", "--" + bnd + strings.Repeat(" ", 70<<10) + "\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			form, files, err := parseBody(c.body, testLimits(dir))
			var le *LimitError
			if !errors.Is(err, ErrMalformed) || errors.As(err, &le) {
				t.Fatalf("err = %v, want a malformed-body error", err)
			}
			if form != nil || files != nil {
				t.Errorf("form %q files %+v returned with the error", form, files)
			}
			assertEmptyDir(t, dir)
		})
	}
	for _, b := range []string{"", strings.Repeat("b", 71)} {
		if _, _, err := Read(strings.NewReader("--"+b+"--\r\n"), b, testLimits(t.TempDir())); !errors.Is(err, ErrMalformed) {
			t.Errorf("boundary of %d bytes: err = %v, want malformed", len(b), err)
		}
	}
}

func TestMultipartLenientForms(t *testing.T) {
	cases := []struct {
		name, body string
		form       [][2]string
	}{
		{"LF line ends", "--" + bnd + "\nContent-Disposition: form-data; name=\"a\"\n\nv\n--" + bnd + "--\n", [][2]string{{"a", "v"}}},
		{"preamble, padding, epilogue", "preamble\r\n--" + bnd + " \t\r\n" + fieldPart("a", "v") + "\r\n--" + bnd + "--junk after", [][2]string{{"a", "v"}}},
		{"no parts", "--" + bnd + "--", nil},
		{"odd case", mpBody("content-disposition: FORM-DATA; NAME=\"a\"\r\n\r\nv"), [][2]string{{"a", "v"}}},
		{"unquoted, spaced params", mpBody("Content-Disposition: form-data ; name = a b ; x\r\n\r\nv"), [][2]string{{"a b", "v"}}},
		{"params without value", mpBody("Content-Disposition: form-data; x; name=\"a\";;y\r\n\r\nv"), [][2]string{{"a", "v"}}},
		{"filename* ignored", mpBody("Content-Disposition: form-data; name=\"a\"; filename*=UTF-8''x.php\r\n\r\nv"), [][2]string{{"a", "v"}}},
		{"skipped parts", mpBody("Content-Type: text/plain\r\n\r\nno disposition", "Content-Disposition: attachment; name=\"b\"\r\n\r\nnot form-data", fieldPart("", "empty name"), fieldPart("a", "v")), [][2]string{{"a", "v"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			form, files, err := parseBody(c.body, testLimits(dir))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(form, c.form) || len(files) != 0 {
				t.Fatalf("form %q files %+v, want form %q", form, files, c.form)
			}
			assertEmptyDir(t, dir)
		})
	}
}

func TestMultipartBoundary(t *testing.T) {
	for ct, want := range map[string]string{
		`multipart/form-data; boundary=abc`:           "abc",
		`Multipart/Form-Data; boundary="a b:c"`:       "a b:c",
		`multipart/mixed; boundary=abc`:               "",
		`application/x-www-form-urlencoded`:           "",
		`multipart/form-data; boundary="unterminated`: "",
	} {
		if got := Boundary([]byte(ct)); got != want {
			t.Errorf("Boundary(%q) = %q, want %q", ct, got, want)
		}
	}
}
