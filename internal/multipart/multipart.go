// Package multipart reads a multipart/form-data request body as it streams
// in: fields into memory and files into temp files, within Limits, refusing
// what PHP would read differently. The gateway reads the body; the worker
// protocol encodes what came of it.
package multipart

import (
	"bytes"
	"io"
	"mime"
	"os"
	"strings"
)

// Read splits a multipart body as it streams by: fields become
// name/value pairs, file parts go to temp files (a PHP app gets paths, as under
// FPM). Any error stops it at once and removes the files it made; on success
// the caller removes them with Remove once the job is answered.
//
// It follows PHP's rfc1867.c where RFC 7578 leaves room: filename="" is an
// unselected file input (UPLOAD_ERR_NO_FILE, content dropped, not counted in
// MaxFiles); only \\ and \" are escapes in a quoted parameter, so Windows paths
// keep their backslashes; filename* is ignored (RFC 7578 section 4.2); lines
// may end in LF alone. Unlike PHP, a duplicate name or filename parameter is
// an error: what the limits checked must be what PHP gets.
func Read(r io.Reader, boundary string, lim Limits) (form [][2]string, files []Upload, err error) {
	if len(boundary) == 0 || len(boundary) > 70 { // RFC 2046 section 5.1.1
		return nil, nil, malformed("boundary must be 1 to 70 bytes")
	}
	p := &partReader{src: r, buf: make([]byte, 64<<10), w: 1, delim: []byte("\n--" + boundary)}
	p.buf[0] = '\n' // so a delimiter on the first line is found like any other
	defer func() {
		if err != nil {
			Remove(files)
			form, files = nil, nil
		}
	}()
	last, err := p.body(discard) // the preamble
	var parts, nfiles int
	var disk, fields int64
	for err == nil && !last {
		if parts++; parts > lim.MaxParts {
			return form, files, &LimitError{What: limitParts, Limit: int64(lim.MaxParts)}
		}
		var h partHeader
		if h, err = p.header(lim.MaxHeaderBytes); err != nil {
			return form, files, err
		}
		switch {
		case h.name == "":
			last, err = p.body(discard)
		case !h.isFile:
			var v []byte
			last, err = p.body(func(b []byte) error {
				if fields += int64(len(b)); fields > lim.MaxFieldBytes {
					return &LimitError{What: limitFields, Limit: lim.MaxFieldBytes}
				}
				v = append(v, b...)
				return nil
			})
			form = append(form, [2]string{h.name, string(v)})
		case h.filename == "":
			last, err = p.body(discard)
			files = append(files, Upload{Field: h.name, ErrCode: 4})
		default:
			if forbidden(h.filename, lim.Forbid) {
				return form, files, &LimitError{What: limitExtension, Name: h.filename}
			}
			if nfiles++; nfiles > lim.MaxFiles {
				return form, files, &LimitError{What: limitFiles, Limit: int64(lim.MaxFiles)}
			}
			var f *os.File
			if f, err = os.CreateTemp(lim.Dir, "ferry-upload-*"); err != nil {
				return form, files, err
			}
			files = append(files, Upload{Field: h.name, Name: h.filename, Type: h.ctype, Path: f.Name()})
			up := &files[len(files)-1]
			last, err = p.body(func(b []byte) error {
				if disk+int64(len(b)) > lim.MaxDiskBytes {
					return &LimitError{What: limitDisk, Limit: lim.MaxDiskBytes}
				}
				n, err := f.Write(b)
				disk += int64(n)
				up.Size += int64(n)
				return err
			})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	return form, files, err
}

func discard([]byte) error { return nil }

// forbidden reports whether name's last path element ends in one of exts.
// Trailing dots and spaces are ignored: Windows drops them when it saves.
func forbidden(name string, exts []string) bool {
	base := name[strings.LastIndexAny(name, `/\`)+1:]
	base = strings.ToLower(strings.TrimRight(base, ". "))
	for _, e := range exts {
		if e != "" && strings.HasSuffix(base, strings.ToLower(e)) {
			return true
		}
	}
	return false
}

// partReader cuts a multipart stream at its delimiters. It keeps its own
// buffer so that bytes are moved to its front only when few are left: a body
// full of near-delimiters must cost time linear in its size.
type partReader struct {
	src   io.Reader
	buf   []byte
	r, w  int    // unread bytes are buf[r:w]
	err   error  // the source's first error, io.EOF at its end
	delim []byte // "\n--" + boundary; a CR before it belongs to it too
}

// more reads more bytes after the unread ones. Its error says where the body
// was cut short, or why it could not be read; a buffer full of unread bytes
// means a line longer than any the format needs.
func (p *partReader) more(where string) error {
	if p.r > 0 {
		p.w = copy(p.buf, p.buf[p.r:p.w])
		p.r = 0
	}
	for tries := 0; p.err == nil && p.w < len(p.buf); tries++ {
		n, err := p.src.Read(p.buf[p.w:])
		p.w, p.err = p.w+n, err
		if n > 0 {
			return nil
		}
		if tries == 100 && err == nil {
			p.err = io.ErrNoProgress
		}
	}
	if p.err == io.EOF || p.err == nil {
		return malformed(where)
	}
	return p.err
}

// body passes the bytes up to the next delimiter to emit, in pieces valid only
// during the call, and consumes the delimiter line. last is true for the
// close delimiter, after which nothing is read. Content that only looks like a
// delimiter is passed on with what follows it, so that emit sees large pieces.
func (p *partReader) body(emit func([]byte) error) (last bool, err error) {
	// emitTo passes data[:n] on and drops it from the buffer.
	emitTo := func(data []byte, n int) error {
		if n == 0 {
			return nil
		}
		p.r += n
		return emit(data[:n])
	}
	for from := 0; ; {
		data := p.buf[p.r:p.w]
		i := bytes.Index(data[from:], p.delim)
		if i < 0 {
			// All but a tail that may begin a delimiter (with its CR) is content.
			if err := emitTo(data, max(0, len(data)-len(p.delim))); err != nil {
				return false, err
			}
			if err := p.more("missing final boundary"); err != nil {
				return false, err
			}
			from = 0
			continue
		}
		i += from
		end := i
		if end > 0 && data[end-1] == '\r' {
			end--
		}
		switch n, kind := delimLine(data[i+len(p.delim):]); kind {
		case delimNext, delimClose:
			if err := emitTo(data, end); err != nil {
				return false, err
			}
			p.r += i - end + len(p.delim) + n
			return kind == delimClose, nil
		case delimNot:
			from = i + 1
		default:
			if err := emitTo(data, end); err != nil {
				return false, err
			}
			if err := p.more("bad boundary line"); err != nil {
				return false, err
			}
			from = 0
		}
	}
}

const (
	delimUnsure = iota // more bytes needed
	delimNot           // the boundary was a prefix of content
	delimNext
	delimClose
)

// delimLine classifies the bytes after "--boundary" and says how many of them
// belong to the delimiter line: "--" closes; spaces or tabs then a line end
// (RFC 2046 transport padding) open the next part.
func delimLine(b []byte) (n, kind int) {
	if bytes.HasPrefix(b, []byte("--")) {
		return 2, delimClose
	}
	rest := bytes.TrimLeft(b, " \t")
	pad := len(b) - len(rest)
	switch {
	case bytes.HasPrefix(rest, []byte("\n")):
		return pad + 1, delimNext
	case bytes.HasPrefix(rest, []byte("\r\n")):
		return pad + 2, delimNext
	case len(rest) == 0 || string(rest) == "\r" || (pad == 0 && string(rest) == "-"):
		return 0, delimUnsure
	}
	return 0, delimNot
}

// partHeader is what a part's header block says.
type partHeader struct {
	name, filename, ctype string
	isFile                bool // a filename parameter was sent, maybe empty
}

// header reads a part's header block, at most limit bytes with its line ends
// and the empty line closing it.
func (p *partReader) header(limit int) (h partHeader, err error) {
	var cd string
	var haveCD, haveCT bool
	var total int
	var line []byte
	for {
		data := p.buf[p.r:p.w]
		n := bytes.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		if total += n; total > limit {
			return h, &LimitError{What: limitHeader, Limit: int64(limit)}
		}
		line = append(line, data[:n]...)
		if p.r += n; !bytes.HasSuffix(line, []byte("\n")) {
			if err := p.more("part header cut short"); err != nil {
				return h, err
			}
			continue
		}
		l := string(bytes.TrimSuffix(line[:len(line)-1], []byte("\r")))
		line = line[:0]
		if strings.IndexByte(l, 0) >= 0 {
			return h, malformed("NUL in a part header")
		}
		if l == "" {
			break
		}
		// A name with blanks, and so a folded line (RFC 7578 has none), is refused.
		k := strings.IndexByte(l, ':')
		if k <= 0 || strings.ContainsAny(l[:k], " \t") {
			return h, malformed("bad part header line")
		}
		switch key, v := l[:k], strings.TrimSpace(l[k+1:]); {
		case !haveCD && strings.EqualFold(key, "Content-Disposition"):
			cd, haveCD = v, true
		case !haveCT && strings.EqualFold(key, "Content-Type"):
			h.ctype, haveCT = v, true
		}
	}
	if haveCD {
		err = h.disposition(cd)
	}
	return h, err
}

// disposition reads name and filename from a Content-Disposition value. Another
// type than form-data leaves the part nameless, so skipped.
func (h *partHeader) disposition(v string) error {
	typ, params, _ := strings.Cut(v, ";")
	if !strings.EqualFold(strings.TrimSpace(typ), "form-data") {
		return nil
	}
	var haveName bool
	for s := strings.TrimLeft(params, " \t;"); s != ""; s = strings.TrimLeft(s, " \t;") {
		eq := strings.IndexAny(s+";", "=;")
		if eq == len(s) || s[eq] == ';' { // a parameter without value
			s = s[eq:]
			continue
		}
		key, val := strings.TrimSpace(s[:eq]), strings.TrimLeft(s[eq+1:], " \t")
		if strings.HasPrefix(val, `"`) {
			var err error
			if val, s, err = unquote(val[1:]); err != nil {
				return err
			}
		} else {
			val, s, _ = strings.Cut(val, ";")
			val = strings.TrimSpace(val)
		}
		switch strings.ToLower(key) {
		case "name":
			if haveName {
				return malformed("two name parameters")
			}
			h.name, haveName = val, true
		case "filename":
			if h.isFile {
				return malformed("two filename parameters")
			}
			h.filename, h.isFile = val, true
		}
	}
	return nil
}

// unquote reads a quoted string whose opening quote is gone, unescaping only
// \\ and \" as PHP does, and returns what follows its parameter.
func unquote(s string) (val, rest string, err error) {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			if rest = strings.TrimLeft(s[i+1:], " \t"); rest != "" && rest[0] != ';' {
				return "", "", malformed("text after a quoted parameter")
			}
			return string(b), rest, nil
		}
		if c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '"') {
			i++
			c = s[i]
		}
		b = append(b, c)
	}
	return "", "", malformed("unterminated quoted parameter")
}

// Boundary returns the boundary of a multipart/form-data body, or "".
func Boundary(ct []byte) string {
	if !bytes.HasPrefix(bytes.ToLower(ct), []byte("multipart/form-data")) {
		return ""
	}
	_, params, err := mime.ParseMediaType(string(ct))
	if err != nil {
		return ""
	}
	return params["boundary"]
}
