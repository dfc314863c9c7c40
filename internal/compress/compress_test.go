package compress

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"
)

func compressed(t *testing.T, c *Options, accept, ctype string, body []byte, extra ...string) *fasthttp.Response {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("GET")
	if accept != "" {
		ctx.Request.Header.Set("Accept-Encoding", accept)
	}
	ctx.Response.Header.SetNoDefaultContentType(true) // as writeAnswer does
	if ctype != "" {
		ctx.Response.Header.SetContentType(ctype)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		ctx.Response.Header.Set(extra[i], extra[i+1])
	}
	ctx.Response.SetBodyRaw(body)
	New(c).Apply(&ctx)
	var out fasthttp.Response
	ctx.Response.CopyTo(&out)
	return &out
}

func decode(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "gzip":
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = z
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "zstd":
		z, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		r = z
	default:
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var page = []byte(strings.Repeat("<p>Hello, compressible world</p>\n", 200))

func all() *Options {
	return &Options{MinSize: 1024, Algorithms: []string{"zstd", "br", "gzip"}}
}

func TestCompressionNegotiates(t *testing.T) {
	for _, tc := range []struct{ accept, want string }{
		{"gzip", "gzip"},
		{"x-gzip", "gzip"},
		{"gzip, deflate, br", "br"},      // equal weights: the server's order, zstd absent
		{"gzip, br, zstd", "zstd"},       // equal weights: the server's order
		{"br;q=0.5, gzip;q=0.9", "gzip"}, // the client's weights first
		{"zstd;q=0, br;q=0, gzip;q=0.1", "gzip"},
		{"*", "zstd"},
		{"*;q=0.2, br", "br"},
		{"identity", ""},
		{"gzip;q=0", ""},
		{"*;q=0", ""},
		{"gzip;q=2", ""}, // an invalid weight never selects a coding
		{"", ""},
	} {
		resp := compressed(t, all(), tc.accept, "text/html; charset=utf-8", page)
		if got := string(resp.Header.ContentEncoding()); got != tc.want {
			t.Errorf("Accept-Encoding %q: %q, want %q", tc.accept, got, tc.want)
			continue
		}
		if !bytes.Equal(decode(t, tc.want, resp.Body()), page) {
			t.Errorf("Accept-Encoding %q: the body does not decode to the page", tc.accept)
		}
		if tc.want != "" && len(resp.Body()) >= len(page)/4 {
			t.Errorf("%s: %d bytes from %d", tc.want, len(resp.Body()), len(page))
		}
		if string(resp.Header.Peek("Vary")) != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary %q", tc.accept, resp.Header.Peek("Vary"))
		}
	}
}

func TestCompressionSkips(t *testing.T) {
	small := []byte(strings.Repeat("x", 1023))
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name, ctype string
		body        []byte
		extra       []string
	}{
		{"small body", "text/plain", small, nil},
		{"image", "image/png", page, nil},
		{"no type", "", page, nil},
		{"already encoded", "text/html", page, []string{"Content-Encoding", "br"}},
		{"a range", "text/html", page, []string{"Content-Range", "bytes 0-9/100"}},
		{"incompressible", "application/json", random, nil},
	} {
		resp := compressed(t, all(), "gzip, br, zstd", tc.ctype, tc.body, tc.extra...)
		want := ""
		if tc.name == "already encoded" {
			want = "br"
		}
		if got := string(resp.Header.ContentEncoding()); got != want || !bytes.Equal(resp.Body(), tc.body) {
			t.Errorf("%s: encoding %q, body changed %v", tc.name, got, !bytes.Equal(resp.Body(), tc.body))
		}
	}
}

func TestCompressionTypesAndHeaders(t *testing.T) {
	for _, ct := range []string{"text/css", "application/json", "application/problem+json", "application/atom+xml", "image/svg+xml", "TEXT/HTML; charset=utf-8"} {
		if resp := compressed(t, all(), "gzip", ct, page); string(resp.Header.ContentEncoding()) != "gzip" {
			t.Errorf("%s not compressed", ct)
		}
	}
	resp := compressed(t, all(), "gzip", "text/html", page, "ETag", `"v1"`, "Vary", "Cookie")
	if got := string(resp.Header.Peek("ETag")); got != `W/"v1"` {
		t.Errorf("ETag %q, want the weak form", got)
	}
	if got := string(resp.Header.Peek("Vary")); got != "Cookie, Accept-Encoding" {
		t.Errorf("Vary %q", got)
	}
	resp = compressed(t, all(), "gzip", "text/html", page, "Vary", "accept-encoding")
	if got := string(resp.Header.Peek("Vary")); got != "accept-encoding" {
		t.Errorf("Vary %q: Accept-Encoding listed twice", got)
	}
	only := &Options{MinSize: 0, Types: []string{"application/x-custom"}, Algorithms: []string{"gzip"}}
	if resp := compressed(t, only, "gzip", "text/html", page); len(resp.Header.ContentEncoding()) != 0 {
		t.Error("text/html compressed though only application/x-custom is listed")
	}
	if resp := compressed(t, only, "gzip", "application/x-custom", page); string(resp.Header.ContentEncoding()) != "gzip" {
		t.Error("the listed type was not compressed")
	}
}

// An event stream flushed after every event must still shrink: an encoder that
// starts each flushed part afresh sends more bytes than the events themselves.
func TestCompressedStreamShrinks(t *testing.T) {
	for name, e := range encoders {
		var out bytes.Buffer
		w, release := e.open(&out)
		var raw []byte
		for i := 0; i < 500; i++ {
			ev := fmt.Appendf(nil, "id: %d\nevent: tick\ndata: {\"n\":%d,\"sent\":1795719302.%06d}\n\n", i, i, i*7919%1000000)
			raw = append(raw, ev...)
			if _, err := w.Write(ev); err != nil {
				t.Fatal(err)
			}
			before := out.Len()
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.Len() == before {
				t.Fatalf("%s: flushing event %d wrote nothing: the client would wait for it", name, i)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		release()
		if got := decode(t, name, out.Bytes()); !bytes.Equal(got, raw) {
			t.Fatalf("%s: the stream does not decode to its events", name)
		}
		t.Logf("%s: %d bytes of events, %d compressed", name, len(raw), out.Len())
		if out.Len()*2 > len(raw) {
			t.Errorf("%s: %d events of %d bytes came out as %d bytes, want under half", name, 500, len(raw), out.Len())
		}
	}
}
