package gateway

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/valyala/fasthttp"
)

var testHandler = New(nil, Options{})

// wrkRequest is what the hello benchmark sends.
const wrkRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8181\r\n\r\n"

func requestCtx(tb testing.TB, raw string) *fasthttp.RequestCtx {
	tb.Helper()
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		tb.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	return &ctx
}

func BenchmarkEncodeRequest(b *testing.B) {
	ctx := requestCtx(b, wrkRequest)
	uri := []byte("/")
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		// As in the server, every request comes with its URI not parsed yet.
		ctx.Request.SetRequestURIBytes(uri)
		buf = testHandler.encodeRequest(buf[:0], ctx, nil, nil, false, "")
	}
}

func unserializeInPHP(t *testing.T, enc []byte) string {
	t.Helper()
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php is required: ", err)
	}
	cmd := exec.Command(php, "-r", `echo json_encode(unserialize(stream_get_contents(STDIN), ['allowed_classes' => false]));`)
	cmd.Stdin = bytes.NewReader(enc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	return string(out)
}

// The constant keys are hand-serialized, so PHP itself checks the result.
func TestEncodedRequestUnserializesInPHP(t *testing.T) {
	cases := []struct {
		name, raw string
		form      [][2]string
		files     []multipart.Upload
		parsed    bool
		want      string
	}{{
		name: "every field",
		raw:  "POST /a/b?x=1&y=2 HTTP/1.1\r\nHost: h\r\nCookie: c=d; c=e\r\nX-Twice: 1\r\nX-Twice: 2\r\nContent-Length: 0\r\n\r\n",
		form: [][2]string{{"f", "v"}}, files: []multipart.Upload{{Field: "u", Name: "n.txt", Type: "text/plain", Path: "/tmp/p", Size: 3}}, parsed: true,
		want: `{"method":"POST","uri":"\/a\/b?x=1&y=2","path":"\/a\/b","query":"x=1&y=2",` +
			`"remote_addr":"127.0.0.1:40000","host":"h",` +
			`"headers":{"Host":["h"],"Content-Length":["0"],"Cookie":["c=d; c=e"],"X-Twice":["1","2"]},"cookies":{"c":"d"},` +
			`"form":[["f","v"]],"files":[["u","n.txt","text\/plain","\/tmp\/p",0,3]],"parsed":true}`,
	}, {
		// Defaults are left out; php/worker's Request fills them in.
		name: "plain GET", raw: wrkRequest,
		want: `{"method":"GET","uri":"\/","path":"\/","remote_addr":"127.0.0.1:40000","host":"127.0.0.1:8181","headers":{"Host":["127.0.0.1:8181"]}}`,
	}, {
		name: "HTTP/1.0", raw: "GET /x HTTP/1.0\r\nHost: h\r\n\r\n",
		want: `{"method":"GET","uri":"\/x","path":"\/x","protocol":"HTTP\/1.0","remote_addr":"127.0.0.1:40000","host":"h","headers":{"Host":["h"],"Connection":["close"]}}`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			enc := testHandler.encodeRequest(nil, requestCtx(t, c.raw), c.form, c.files, c.parsed, "")
			if got := unserializeInPHP(t, enc); got != c.want {
				t.Fatalf("PHP decoded\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// Past smallGroup headers the grouping uses a map; PHP must see the same
// shape: first-seen order, repeated names as one list in arrival order.
func TestManyHeadersGroupedInOrder(t *testing.T) {
	var raw, want strings.Builder
	raw.WriteString("GET / HTTP/1.1\r\nHost: h\r\n")
	for i := range 30 {
		fmt.Fprintf(&raw, "X-H%d: %d\r\n", i, i)
		if i > 0 {
			want.WriteString(",")
		}
		fmt.Fprintf(&want, `"X-H%d":["%d"`, i, i)
		if i == 3 {
			want.WriteString(`,"again"`)
		}
		want.WriteString("]")
	}
	raw.WriteString("X-H3: again\r\nCookie: " + strings.Repeat("k=1; ", 40) + "z=2\r\n\r\n")
	enc := testHandler.encodeRequest(nil, requestCtx(t, raw.String()), nil, nil, false, "")
	got := unserializeInPHP(t, enc)
	// fasthttp lists Host and Cookie first; the rest keep their order.
	if !strings.Contains(got, want.String()+"}") || !strings.Contains(got, `"headers":{"Host":["h"],`) || !strings.Contains(got, `"cookies":{"k":"1","z":"2"}`) {
		t.Fatalf("PHP decoded\n%s\nwant headers %s and cookies k=1, z=2", got, want.String())
	}
}
