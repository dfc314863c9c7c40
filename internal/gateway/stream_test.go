package gateway

import (
	"testing"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/protocol/rrproto"
	"github.com/valyala/fasthttp"
)

// A 1xx head is checked like a final one: nothing a worker sends may split
// the response it precedes.
func TestInformationalHeadIsChecked(t *testing.T) {
	cases := []struct {
		name string
		rr   protocol.Protocol
		head string
		bad  bool
	}{
		{name: "early hints", head: `{"status":103,"headers":{"Link":["</a.css>; rel=preload"]}}`},
		{name: "value with CRLF", head: `{"status":103,"headers":{"Link":["</a>\r\nX-Evil: 1"]}}`, bad: true},
		{name: "bad name", head: `{"status":103,"headers":{"Bad Name":["x"]}}`, bad: true},
		{name: "101", head: `{"status":101,"headers":{}}`, bad: true},
		{name: "not JSON", head: `{"status":103,`, bad: true},
		{name: "roadrunner proto", rr: rrproto.New(rrproto.Proto), head: string(rrproto.AppendResponse(nil, 103, map[string][]string{"Link": {"</a>"}}))},
		{name: "roadrunner proto injection", rr: rrproto.New(rrproto.Proto), head: string(rrproto.AppendResponse(nil, 103, map[string][]string{"Link": {"a\nb"}})), bad: true},
	}
	for _, c := range cases {
		h := New(nil, Options{Protocol: c.rr})
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetProtocol("HTTP/1.1")
		st, err := h.proto.PartStatus([]byte(c.head))
		if err == nil {
			err = h.informational(&ctx, st, []byte(c.head))
		}
		if (err != nil) != c.bad {
			t.Errorf("%s: error %v, want bad=%v", c.name, err, c.bad)
		}
	}
}
