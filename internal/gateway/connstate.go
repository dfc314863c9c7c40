package gateway

import (
	"net"

	"github.com/ferry-php/ferry/internal/listen"
)

// conn is a connection of the HTTP/1.1 front with the request path's own
// state beside the socket's (listen.Conn): what Serve keeps per connection
// instead of allocating it per request. Serve finds it in RequestCtx.Conn.
type conn struct {
	listen.Conn
	remote string     // RemoteAddr().String(), for every request's context
	gone   clientGone // the running request's job context
	timing timing     // the running request's job timing (timing.go)
}

// NewConn is listen.Options.Front for the listeners fasthttp reads for a
// Handler (and SplitH2C sorts first).
func NewConn(tc *net.TCPConn) listen.FrontConn {
	return &conn{Conn: listen.Conn{TCPConn: tc}, remote: tc.RemoteAddr().String()}
}
