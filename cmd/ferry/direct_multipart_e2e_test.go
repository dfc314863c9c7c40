package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/ferry-php/ferry/internal/multipart"
)

// mpLimits is internal/multipart.Limits as Ferry\Ext\multipart_parse() takes it.
type mpLimits struct {
	Dir            string   `json:"dir"`
	MaxFiles       int      `json:"max_files"`
	MaxParts       int      `json:"max_parts"`
	MaxHeaderBytes int      `json:"max_header_bytes"`
	MaxDiskBytes   int64    `json:"max_disk_bytes"`
	MaxFieldBytes  int64    `json:"max_field_bytes"`
	Forbid         []string `json:"forbid"`
}

// mpResult is what one side made of a body: a refusal (Status, Error the answer's
// text) or the form pairs and files PHP gets (Multipart false: the body stays unparsed).
type mpResult struct {
	Status    int
	Error     string
	Multipart bool
	Form      [][2]string
	Files     []mpFile
}

type mpFile struct {
	Field, Name, Type string
	Error             int
	Size              int64
	Content           *string // nil: no file (an empty file input)
}

type mpCase struct{ name, ct, body string }

// mpProfile is one set of limits: the front's configuration (none: compared with
// internal/multipart.Read in-process only) and what the parser gets for it.
type mpProfile struct {
	name  string
	yaml  string // server.uploads; "" = no front
	limit mpLimits
}

// The front's byte limits are max_body_size (1MiB here): only the in-process profile
// reaches the disk and field totals.
var mpProfiles = []mpProfile{
	{"loose", "    max_files: 20\n    max_parts: 1000\n    max_part_header_size: 16KiB\n    forbid: [.php, .phar]\n",
		mpLimits{MaxFiles: 20, MaxParts: 1000, MaxHeaderBytes: 16 << 10, MaxDiskBytes: 1 << 20, MaxFieldBytes: 1 << 20, Forbid: []string{".php", ".phar"}}},
	{"tight", "    max_files: 2\n    max_parts: 6\n    max_part_header_size: 300\n    forbid: [.PHP]\n",
		mpLimits{MaxFiles: 2, MaxParts: 6, MaxHeaderBytes: 300, MaxDiskBytes: 1 << 20, MaxFieldBytes: 1 << 20, Forbid: []string{".PHP"}}},
	{"bytes", "", mpLimits{MaxFiles: 3, MaxParts: 8, MaxHeaderBytes: 300, MaxDiskBytes: 40, MaxFieldBytes: 30, Forbid: []string{".php", ""}}},
}

// TestDirectMultipartDifferential puts each body of directMultipartCases() and a few
// hundred random ones through the Go front (a real ferry, its workers echoing the form
// and files they got), through internal/multipart.Read in-process, and through ext/ferry's
// parser (Ferry\Ext\multipart_parse() in one php process), and wants the same refusals
// (status and text), form pairs and files from all. FERRY_MULTIPART_SEED and
// FERRY_MULTIPART_RANDOM choose other random bodies, and how many.
func TestDirectMultipartDifferential(t *testing.T) {
	so := extensionSO(t)
	cases := directMultipartCases()
	seed := int64(34)
	if s := os.Getenv("FERRY_MULTIPART_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	count := 400
	if s := os.Getenv("FERRY_MULTIPART_RANDOM"); s != "" {
		fmt.Sscan(s, &count)
	}
	rnd := rand.New(rand.NewSource(seed))
	for i := 0; i < count; i++ {
		cases = append(cases, randomMultipartCase(rnd, fmt.Sprintf("random %d (seed %d)", i, seed)))
	}
	php := startMultipartPHP(t, so)
	for _, p := range mpProfiles {
		t.Run(p.name, func(t *testing.T) {
			var front *server
			if p.yaml != "" {
				front = startFerry(t, fmt.Sprintf(`server:
  address: "%%ADDR%%"
  max_body_size: 1MiB
  uploads:
    dir: %q
%sadmin:
  socket: "%%ADMIN%%"
log:
  level: warn
pool:
  command: ["php", "%%DIR%%/testdata/multipart_raw.php"]
  num_workers: 1
`, t.TempDir(), p.yaml))
			}
			lim := p.limit
			lim.Dir = t.TempDir()
			mismatches := 0
			verdicts := map[string]int{}
			for _, c := range cases {
				got := php.parse(t, c, lim)
				want := goMultipart(t, c, lim)
				switch {
				case !want.Multipart:
					verdicts["unparsed"]++
				case want.Status == 0:
					verdicts[fmt.Sprintf("parsed, %d fields, %d files", min(len(want.Form), 3), min(len(want.Files), 3))]++
				default:
					verdicts[fmt.Sprintf("%d %s", want.Status, strings.Fields(want.Error)[min(2, len(strings.Fields(want.Error))-1)])]++
				}
				if !reflect.DeepEqual(got, want) {
					mismatches++
					t.Errorf("%s: internal/multipart and ext/ferry differ\nct   %q\nbody %q\ngo   %s\nc    %s", c.name, c.ct, c.body, mpDump(want), mpDump(got))
				}
				if front != nil {
					if fr := frontMultipart(t, front, c); !reflect.DeepEqual(got, fr) {
						mismatches++
						t.Errorf("%s: the front and ext/ferry differ\nct   %q\nbody %q\nfront %s\nc     %s", c.name, c.ct, c.body, mpDump(fr), mpDump(got))
					}
				}
				if mismatches > 10 {
					t.Fatal("too many differences")
				}
			}
			t.Logf("%d bodies compared; verdicts: %v", len(cases), verdicts)
		})
	}
}

func mpDump(r mpResult) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// goMultipart is what the gateway does with the body (gateway.go: Boundary, Read,
// uploadFailed's statuses and texts).
func goMultipart(t *testing.T, c mpCase, lim mpLimits) mpResult {
	boundary := multipart.Boundary([]byte(c.ct))
	if boundary == "" {
		return mpResult{Form: [][2]string{}, Files: []mpFile{}}
	}
	form, files, err := multipart.Read(strings.NewReader(c.body), boundary, multipart.Limits{
		Dir: lim.Dir, MaxFiles: lim.MaxFiles, MaxParts: lim.MaxParts, MaxHeaderBytes: lim.MaxHeaderBytes,
		MaxDiskBytes: lim.MaxDiskBytes, MaxFieldBytes: lim.MaxFieldBytes, Forbid: lim.Forbid,
	})
	defer multipart.Remove(files)
	r := mpResult{Multipart: true, Form: [][2]string{}, Files: []mpFile{}}
	var le *multipart.LimitError
	switch {
	case err == nil:
	case errors.As(err, &le):
		return mpResult{Status: le.Status(), Error: le.Error(), Multipart: true, Form: [][2]string{}, Files: []mpFile{}}
	case errors.Is(err, multipart.ErrMalformed):
		return mpResult{Status: 400, Error: "malformed multipart body", Multipart: true, Form: [][2]string{}, Files: []mpFile{}}
	default:
		return mpResult{Status: 500, Error: "uploads could not be stored", Multipart: true, Form: [][2]string{}, Files: []mpFile{}}
	}
	r.Form = append(r.Form, form...)
	for _, f := range files {
		mf := mpFile{Field: f.Field, Name: f.Name, Type: f.Type, Error: f.ErrCode, Size: f.Size}
		if f.Path != "" {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			mf.Content = &s
		}
		r.Files = append(r.Files, mf)
	}
	return r
}

// frontMultipart posts the body to a ferry running testdata/multipart_raw.php.
func frontMultipart(t *testing.T, s *server, c mpCase) mpResult {
	req, err := http.NewRequest("POST", s.url+"/", strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", c.ct)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	body := readAll(t, resp)
	r := mpResult{Form: [][2]string{}, Files: []mpFile{}}
	if resp.StatusCode != 200 {
		r.Status, r.Error, r.Multipart = resp.StatusCode, strings.TrimSuffix(body, "\n"), true
		return r
	}
	var raw struct {
		Parsed bool
		Form   [][2]string
		Files  [][6]any
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatalf("%s: %v in %q", c.name, err, body)
	}
	r.Multipart = raw.Parsed
	for _, p := range raw.Form {
		r.Form = append(r.Form, [2]string{unb64(t, p[0]), unb64(t, p[1])})
	}
	for _, f := range raw.Files {
		r.Files = append(r.Files, rawFile(t, f))
	}
	return r
}

func unb64(t *testing.T, s any) string {
	str, _ := s.(string)
	b, err := base64.StdEncoding.DecodeString(str)
	if err != nil {
		t.Fatalf("base64 %q: %v", str, err)
	}
	return string(b)
}

func rawFile(t *testing.T, f [6]any) mpFile {
	mf := mpFile{Field: unb64(t, f[0]), Name: unb64(t, f[1]), Type: unb64(t, f[2])}
	e, _ := f[3].(float64)
	n, _ := f[4].(float64)
	mf.Error, mf.Size = int(e), int64(n)
	if f[5] != nil {
		s := unb64(t, f[5])
		mf.Content = &s
	}
	return mf
}

// multipartPHP is one php process running testdata/multipart_c.php.
type multipartPHP struct {
	in  io.Writer
	out *bufio.Reader
}

func startMultipartPHP(t *testing.T, so string) *multipartPHP {
	cmd := exec.Command("php", "-n", "-d", "extension="+so, "testdata/multipart_c.php")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("php: %v", err)
		}
	})
	return &multipartPHP{in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (p *multipartPHP) parse(t *testing.T, c mpCase, lim mpLimits) mpResult {
	line, _ := json.Marshal(map[string]any{
		"ct": base64.StdEncoding.EncodeToString([]byte(c.ct)), "body": base64.StdEncoding.EncodeToString([]byte(c.body)), "limits": lim,
	})
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	answer, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s: php gave no answer: %v", c.name, err)
	}
	var raw struct {
		Status    int
		Error     *string
		Multipart bool
		Form      [][2]string
		Files     [][6]any
		Missing   int
		Leftover  int
	}
	if err := json.Unmarshal(answer, &raw); err != nil {
		t.Fatalf("%s: %v in %q", c.name, err, answer)
	}
	if raw.Missing > 0 || raw.Leftover > 0 {
		t.Errorf("%s: %d reported files missing or of another size, %d files left in the spool dir", c.name, raw.Missing, raw.Leftover)
	}
	r := mpResult{Status: raw.Status, Multipart: raw.Multipart, Form: [][2]string{}, Files: []mpFile{}}
	if raw.Error != nil {
		r.Error = unb64(t, *raw.Error)
	}
	for _, f := range raw.Form {
		r.Form = append(r.Form, [2]string{unb64(t, f[0]), unb64(t, f[1])})
	}
	for _, f := range raw.Files {
		r.Files = append(r.Files, rawFile(t, f))
	}
	return r
}
