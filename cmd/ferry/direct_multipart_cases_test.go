package main

import (
	"fmt"
	"math/rand"
	"mime/multipart"
	"strings"
)

const dmBnd = "xYzZY"

var dmCT = "multipart/form-data; boundary=" + dmBnd

// dmBody frames raw parts (header lines, empty line, content) with CRLF delimiters.
func dmBody(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("--" + dmBnd + "\r\n" + p + "\r\n")
	}
	b.WriteString("--" + dmBnd + "--\r\n")
	return b.String()
}

func dmField(name, value string) string {
	return `Content-Disposition: form-data; name="` + name + "\"\r\n\r\n" + value
}

func dmFile(field, filename, content string) string {
	return `Content-Disposition: form-data; name="` + field + `"; filename="` + filename +
		"\"\r\nContent-Type: text/plain\r\n\r\n" + content
}

// directMultipartCases: every body of internal/multipart's tests and of the e2e upload
// tests, then limits, refused names, Content-Type quirks and Unicode the Go side reads.
func directMultipartCases() []mpCase {
	var cs []mpCase
	add := func(name, body string) { cs = append(cs, mpCase{name, dmCT, body}) }
	binary := "a\r\n--xYzZ\r\nb\r\n--xYzZYx\r\n--xYzZY-c\n--xYzZ\r"
	add("fields and files in order", dmBody(dmField("a", "1"), dmFile("f1", "one.txt", "hello"), dmField("b", ""),
		"Content-Disposition: form-data; filename=\"anon.txt\"\r\n\r\nno name: skipped", dmField("a", "2"),
		"Content-Disposition: form-data; name=\"f2\"; filename=\"two.bin\"\r\n\r\n"+binary, dmField("c", "line1\r\nline2\r\n")))
	var names []string
	for _, n := range []string{"photos/2024/a.jpg", `C:\Users\me\b.txt`, `say \"hi\".txt`, `back\\slash.txt`, "%22q%22.txt", "dir/résumé.pdf"} {
		names = append(names, dmFile("u[]", n, "x"))
	}
	add("full paths", dmBody(append(names, "Content-Disposition: form-data; name=u; filename=plain/bare.txt\r\n\r\nx")...))
	add("empty file inputs", dmBody("Content-Disposition: form-data; name=\"avatar\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n",
		dmFile("other", "", "dropped, as PHP drops it"), dmFile("zero", "zero.txt", "")))
	first := dmFile("first", "first.txt", "made before the refusal")
	bigHeader := "Content-Disposition: form-data; name=\"h\"\r\nX-Pad: " + strings.Repeat("p", 300) + "\r\n\r\nv"
	add("parts", dmBody(first, dmField("a", "1"), dmField("b", "2"), dmField("c", "3"), dmField("d", "4"), dmField("e", "5"), dmField("f", "6")))
	add("files", dmBody(first, dmFile("f", "2.txt", "x"), dmFile("f", "3.txt", "x"), dmFile("f", "4.txt", "x")))
	add("header", dmBody(first, bigHeader))
	add("header line without end", dmBody(first, strings.Repeat("h", 200<<10)))
	add("disk", dmBody(dmFile("a", "a", strings.Repeat("1", 20)), dmFile("b", "b", strings.Repeat("2", 20)), dmFile("c", "c", "3")))
	add("disk in one big file", dmBody(dmFile("a", "a", strings.Repeat("d", 300<<10))))
	add("fields", dmBody(first, dmField("a", strings.Repeat("1", 15)), dmField("b", strings.Repeat("2", 15)), dmField("c", "3")))
	add("forbid allows others", dmBody(first, dmFile("f", "php.txt", "x"), dmFile("f", "a.phps", "x")))
	add("forbid", dmBody(first, dmFile("f", "dir/shell.php", "<?php")))
	add("forbid any case", dmBody(first, dmFile("f", "shell.PhP", "<?php")))
	add("forbid trailing dot", dmBody(first, dmFile("f", `C:\x\shell.php. `, "<?php")))
	add("forbid phar", dmBody(dmFile("f", "x.phar", "<?php")))
	add("forbid Kelvin and dotted I", dmBody(dmFile("f", "x.\u212Aphp", "k"), dmFile("g", "y.ph\u0130.php", "i")))
	add("forbid quoted name", dmBody(dmFile("f", "a\tb\x01\xff\u00ad\u2028\U0001F600\".php", "<?php")))
	// refused names with runes of every kind, quoted with %q in the answer
	qr := rand.New(rand.NewSource(7))
	for i := 0; i < 40; i++ {
		var n strings.Builder
		for k := 1 + qr.Intn(6); k > 0; k-- {
			switch qr.Intn(4) {
			case 0:
				n.WriteByte(byte(0x80 + qr.Intn(0x80))) // invalid UTF-8
			case 1:
				n.WriteByte(byte(1 + qr.Intn(0x7e)))
			case 2:
				n.WriteRune(rune(0x80 + qr.Intn(0x3000)))
			default:
				if r := rune(0x3000 + qr.Intn(0x10FFFF-0x3000)); r < 0xD800 || r > 0xDFFF {
					n.WriteRune(r)
				}
			}
		}
		name := strings.NewReplacer("\r", "", "\n", "", "\"", "", "\\", "").Replace(n.String()) + ".php"
		add(fmt.Sprintf("refused name %q", name), dmBody(dmFile("f", name, "<?php")))
	}
	add("many tiny parts", dmBody(repeatParts(dmFile("f[]", "a.txt", "x"), 2000)...))
	first2 := "--" + dmBnd + "\r\n" + dmFile("first", "first.txt", strings.Repeat("made before the error ", 100)) + "\r\n"
	for _, m := range []struct{ name, body string }{
		{"missing final boundary", first2},
		{"cut in a file", first2 + "--" + dmBnd + "\r\n" + dmFile("f", "b.txt", "half of it")},
		{"cut after a boundary", first2 + "--" + dmBnd},
		{"cut in headers", first2 + "--" + dmBnd + "\r\nContent-Disposition: form-data; name=\"x\"\r\n"},
		{"header without colon", first2 + dmBody("Content-Disposition form-data; name=\"x\"\r\n\r\nv")},
		{"header name with space", first2 + dmBody("Content Disposition: form-data; name=\"x\"\r\n\r\nv")},
		{"folded header", first2 + dmBody("Content-Disposition: form-data;\r\n name=\"x\"\r\n\r\nv")},
		{"NUL in header", first2 + dmBody(dmFile("f", "a.php\x00.jpg", "x"))},
		{"unterminated quote", first2 + dmBody("Content-Disposition: form-data; name=\"x\"; filename=\"a.txt\r\n\r\nv")},
		{"text after quote", first2 + dmBody("Content-Disposition: form-data; name=\"x\"; filename=\"a.txt\"b\r\n\r\nv")},
		{"two filenames", first2 + dmBody("Content-Disposition: form-data; name=\"x\"; filename=\"a.txt\"; filename=\"a.php\"\r\n\r\nv")},
		{"two names", first2 + dmBody("Content-Disposition: form-data; name=\"x\"; name=\"y\"\r\n\r\nv")},
		{"no boundary at all", "just some bytes\r\n"},
		{"padding fills the buffer", "--" + dmBnd + strings.Repeat(" ", 70<<10) + "\r\n"},
		{"padding just fits", "--" + dmBnd + strings.Repeat(" ", 65535-len(dmBnd)-4) + "\r\n\r\n\r\n--" + dmBnd + "--"},
		{"padding one too many", "--" + dmBnd + strings.Repeat(" ", 65535-len(dmBnd)-3) + "\r\n\r\n\r\n--" + dmBnd + "--"},
		{"later padding just fits", "x\r\n--" + dmBnd + strings.Repeat("\t", 65536-len(dmBnd)-6) + "\r\n\r\n\r\n--" + dmBnd + "--"},
		{"later padding one too many", "x\r\n--" + dmBnd + strings.Repeat("\t", 65536-len(dmBnd)-5) + "\r\n\r\n\r\n--" + dmBnd + "--"},
		{"cut in a field over the limit", "--" + dmBnd + "\r\n" + dmField("a", strings.Repeat("v", 40))},
		{"cut in a field at the limit", "--" + dmBnd + "\r\n" + dmField("a", strings.Repeat("v", 30+len(dmBnd)+3))},
		{"cut in a field one past", "--" + dmBnd + "\r\n" + dmField("a", strings.Repeat("v", 31+len(dmBnd)+3))},
		{"cut in a file one past", "--" + dmBnd + "\r\n" + dmFile("a", "a.txt", strings.Repeat("v", 41+len(dmBnd)+3))},
		{"cut in a delimiter line", "--" + dmBnd + "\r\n" + dmField("a", strings.Repeat("v", 35)) + "\r\n--" + dmBnd + "  \r"},
		{"LF line ends", "--" + dmBnd + "\nContent-Disposition: form-data; name=\"a\"\n\nv\n--" + dmBnd + "--\n"},
		{"preamble, padding, epilogue", "preamble\r\n--" + dmBnd + " \t\r\n" + dmField("a", "v") + "\r\n--" + dmBnd + "--junk after"},
		{"no parts", "--" + dmBnd + "--"},
		{"delimiter without dashes", "--" + dmBnd + "-"},
		{"odd case", dmBody("content-disposition: FORM-DATA; NAME=\"a\"\r\n\r\nv")},
		{"unquoted, spaced params", dmBody("Content-Disposition: form-data ; name = a b ; x\r\n\r\nv")},
		{"params without value", dmBody("Content-Disposition: form-data; x; name=\"a\";;y\r\n\r\nv")},
		{"filename* ignored", dmBody("Content-Disposition: form-data; name=\"a\"; filename*=UTF-8''x.php\r\n\r\nv")},
		{"skipped parts", dmBody("Content-Type: text/plain\r\n\r\nno disposition", "Content-Disposition: attachment; name=\"b\"\r\n\r\nnot form-data", dmField("", "empty name"), dmField("a", "v"))},
		{"Unicode spaces and folds", dmBody("Content-Di\u017fpo\u017fition:\u00a0form-data\u2003; NAME=\u3000a\u00a0; f\u0130lename=\u1680b.txt\u205f\r\nContent-Type: \u0085text/x\u00a0\r\n\r\nv",
			"Content-Disposition: form-data; name=\xc2a; filename=\"\xe2\x80\"\r\n\r\nw")},
		{"header at its limit", dmBody("Content-Disposition: form-data; name=\"h\"\r\nX: " + strings.Repeat("p", 300-49) + "\r\n\r\nv")},
		{"header one past", dmBody("Content-Disposition: form-data; name=\"h\"\r\nX: " + strings.Repeat("p", 300-48) + "\r\n\r\nv")},
		{"cut in a header past the limit", "--" + dmBnd + "\r\nX: " + strings.Repeat("p", 400)},
		{"parts limit before a cut header", dmBody(repeatParts(dmField("a", "1"), 8)...) + "--" + dmBnd + "\r\nX"},
		{"CR alone before the delimiter", "--" + dmBnd + "\r\n" + dmField("a", "v\r\r") + "\r\n--" + dmBnd + "--"},
	} {
		add(m.name, m.body)
	}
	for _, ct := range []string{
		`multipart/form-data; boundary=xYzZY`, `Multipart/Form-Data; boundary="xYzZY"`, `multipart/form-data;boundary=xYzZY;`,
		`multipart/form-data; boundary=xYzZY; boundary=xYzZY`, `multipart/form-data; boundary=xYzZY; boundary=other`,
		`multipart/form-data; boundary="xYz\ZY"`, `multipart/form-data; boundary="xYz\"ZY"`, `multipart/mixed; boundary=xYzZY`,
		`multipart/form-data-x; boundary=xYzZY`, `multipart/form-data x; boundary=xYzZY`, `multipart/form-data/x; boundary=xYzZY`,
		`multipart/form-data; boundary*0=xY; boundary*1=zZY`, `multipart/form-data; boundary*0*=utf-8''xY; boundary*1*=z%5aY`,
		`multipart/form-data; boundary*=UTF-8'en'%78YzZY; boundary=abc`, `multipart/form-data; boundary*=latin1''xYzZY; boundary=xYzZY`,
		`multipart/form-data; boundary*=us-ascii''xY%zZY; boundary=xYzZY`, `multipart/form-data; boundary*0=xY; boundary*2=zZY`,
		"multipart/form-data\u00a0; boundary=xYzZY\u2000", "multipart/form-data; boundary=xYzZY\u00a0; x=y", "mult\u0130part/form-data; boundary=xYzZY",
		`multipart/form-data; boundary=`, `multipart/form-data; boundary=""`, `multipart/form-data; boundary="unterminated`,
		`multipart/form-data; charset=utf-8; boundary=xYzZY`, `multipart/form-data; a=1; a=2; boundary=xYzZY`, `multipart/form-data; =x; boundary=xYzZY`,
		`multipart/form-data; boundary=` + strings.Repeat("b", 70), `multipart/form-data; boundary=` + strings.Repeat("b", 71),
		`multipart/form-data; boundary*0=` + strings.Repeat("b", 40) + `; boundary*1=` + strings.Repeat("b", 40),
		`multipart/form-data`, `application/x-www-form-urlencoded`, `multipart/form-data; boundary=xYzZY ;`, `multipart/form-data; boundary=xYzZY; ;`,
	} {
		b := dmBody(dmField("a", "1"))
		if strings.Contains(ct, strings.Repeat("b", 70)) {
			b = strings.ReplaceAll(b, dmBnd, strings.Repeat("b", 70))
		}
		cs = append(cs, mpCase{"content type " + ct, ct, b})
	}
	// the e2e upload tests' bodies, written by mime/multipart
	var w strings.Builder
	mw := multipart.NewWriter(&w)
	mw.WriteField("title", "holiday")
	mw.WriteField("meta[lang]", "fr")
	fw, _ := mw.CreateFormFile("photo", "dir/beach.txt")
	fw.Write([]byte("sand and sea \x00 binary"))
	fw, _ = mw.CreateFormFile("docs[]", "a.txt")
	fw.Write([]byte(strings.Repeat("meow\n", 1000)))
	mw.CreateFormFile("nothing", "")
	mw.Close()
	cs = append(cs, mpCase{"mime/multipart writer", mw.FormDataContentType(), w.String()})
	return cs
}

func repeatParts(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// randomMultipartCase builds a body from the pieces parsers disagree on: boundaries of
// every length and character, near-delimiters in content, padding, LF line ends, header
// quirks, refused names, then maybe cuts it short or flips a byte.
func randomMultipartCase(r *rand.Rand, name string) mpCase {
	pick := func(s ...string) string { return s[r.Intn(len(s))] }
	const bchars = "0123456789abcdefXYZ'()+_,-./:=? "
	n := 1 + r.Intn(20)
	if r.Intn(10) == 0 {
		n = 60 + r.Intn(12)
	}
	var bb strings.Builder
	for i := 0; i < n; i++ {
		c := bchars[r.Intn(len(bchars))]
		if c == ' ' && i == n-1 {
			c = '-'
		}
		bb.WriteByte(c)
	}
	b := bb.String()
	q := `"` + strings.ReplaceAll(strings.ReplaceAll(b, `\`, `\\`), `"`, `\"`) + `"`
	ct := pick("multipart/form-data; boundary=", "Multipart/Form-Data;boundary=", "multipart/form-data ; charset=utf-8; BOUNDARY = ") + q
	if strings.Trim(b, "0123456789abcdefXYZ'+_-.") == "" && r.Intn(2) == 0 {
		ct = "multipart/form-data; boundary=" + b
	}
	nl := pick("\r\n", "\r\n", "\n")
	line := func() string {
		if r.Intn(20) == 0 {
			return pick("\r\n", "\n")
		}
		return nl
	}
	delim := "--" + b
	content := func() string {
		var c strings.Builder
		for k := r.Intn(6); k > 0; k-- {
			switch r.Intn(9) {
			case 0:
				c.WriteString(nl + delim[:r.Intn(len(delim))])
			case 1:
				c.WriteString(nl + delim + pick("x", "-", " x", "\r", "\rx", "-x"))
			case 2:
				c.WriteString(delim)
			case 3:
				buf := make([]byte, r.Intn(40))
				r.Read(buf)
				c.Write(buf)
			case 4:
				c.WriteString(strings.Repeat(pick("a", "\r", "\n", "-"), r.Intn(30)))
			case 5:
				c.WriteString(strings.Repeat("big ", r.Intn(1500)))
			default:
				c.WriteString(pick("v", "hello world", "<?php echo 1;", "é", "\x00"))
			}
		}
		return c.String()
	}
	var body strings.Builder
	if r.Intn(4) == 0 {
		body.WriteString(pick("preamble", "--"+b+"x", "\r\n", "junk "+nl) + nl)
	}
	for parts := r.Intn(7); parts > 0; parts-- {
		body.WriteString(delim + pick("", "", " ", "\t \t") + line())
		field := pick("a", "b[]", "c[x]", "", "na me", `q\"uote`, "\u00e9")
		quoted := `"` + field + `"`
		if r.Intn(4) == 0 {
			quoted = field
		}
		cd := pick("Content-Disposition", "content-disposition", "CONTENT-DISPOSITION", "Content-Di\u017fposition") + ":" + pick(" ", "", "\t", " \u00a0") +
			pick("form-data", "FORM-DATA", "attachment", "form-data ") + pick("; ", ";", " ; ") + pick("name", "NAME", "Name ") + pick("=", " = ") + quoted
		if r.Intn(2) == 0 {
			fn := pick("a.txt", "shell.php", "SHELL.PhP. ", "dir/x.phar", `C:\x\y.txt`, "", "résumé.pdf", "x.pHp..", "k.\u212Atxt", "x.p\u0130p", "a.PHP", "odd\x01.bin")
			cd += pick("; filename=", "; FILENAME=", "; f\u0130lename=", ";filename*=utf-8''") + `"` + fn + `"`
		}
		if r.Intn(10) == 0 {
			cd += pick("; x", "; size=12", "; y=\"a;b\"", "; name=\"dup\"", "; filename=\"dup\"", "; y=\"unterminated", "; z=\"q\"junk")
		}
		hdr := []string{cd}
		if r.Intn(2) == 0 {
			hdr = append(hdr, pick("Content-Type", "content-type")+": "+pick("text/plain", "image/png", " application/octet-stream ", "", "a\u2000"))
		}
		if r.Intn(5) == 0 {
			hdr = append(hdr, "X-Pad: "+strings.Repeat("p", r.Intn(260)))
		}
		if r.Intn(30) == 0 {
			hdr = append(hdr, pick("no colon", " folded: x", ":empty name", "Nul: a\x00b", "Tab\tName: x"))
		}
		r.Shuffle(len(hdr), func(i, j int) { hdr[i], hdr[j] = hdr[j], hdr[i] })
		for _, h := range hdr {
			body.WriteString(h + line())
		}
		body.WriteString(line() + content() + line())
	}
	body.WriteString(delim + pick("--", "--", "--", "--"+nl, "--junk", "", nl))
	s := body.String()
	if r.Intn(10) == 0 && len(s) > 0 {
		s = s[:r.Intn(len(s))]
	}
	if r.Intn(15) == 0 && len(s) > 0 {
		i := r.Intn(len(s))
		s = s[:i] + string(rune(r.Intn(256))) + s[i+1:]
	}
	return mpCase{name: fmt.Sprintf("%s, boundary %q", name, b), ct: ct, body: s}
}
