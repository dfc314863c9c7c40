package gateway

import (
	"bufio"
	"bytes"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

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
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		buf = encodeRequest(buf[:0], ctx, nil, nil, false)
	}
}

// The constant keys are hand-serialized, so PHP itself checks the result.
func TestEncodedRequestUnserializesInPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php is required: ", err)
	}
	ctx := requestCtx(t, "POST /a/b?x=1&y=2 HTTP/1.1\r\nHost: h\r\nCookie: c=d\r\nX-Twice: 1\r\nX-Twice: 2\r\nContent-Length: 0\r\n\r\n")
	enc := encodeRequest(nil, ctx, [][2]string{{"f", "v"}}, []upload{{field: "u", name: "n.txt", ctype: "text/plain", path: "/tmp/p", size: 3}}, true)
	cmd := exec.Command(php, "-r", `echo json_encode(unserialize(stream_get_contents(STDIN), ['allowed_classes' => false]));`)
	cmd.Stdin = bytes.NewReader(enc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	want := `{"method":"POST","uri":"\/a\/b?x=1&y=2","path":"\/a\/b","query":"x=1&y=2","protocol":"HTTP\/1.1",` +
		`"remote_addr":"127.0.0.1:40000","host":"h","scheme":"http",` +
		`"headers":{"Host":["h"],"Content-Length":["0"],"Cookie":["c=d"],"X-Twice":["1","2"]},"cookies":{"c":"d"},` +
		`"form":[["f","v"]],"files":[["u","n.txt","text\/plain","\/tmp\/p",0,3]],"parsed":true}`
	if string(out) != want {
		t.Fatalf("PHP decoded\n%s\nwant\n%s", out, want)
	}
}
