package listen

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// panics counts the panics recovered while serving a connection, for the
// ferry_front_panics_total metric: a process-wide fact, like the Go runtime's
// own counters.
var panics atomic.Uint64

// Panics is how many panics the front has recovered since it started.
func Panics() uint64 { return panics.Load() }

// Recover keeps a panic while serving one request from ending the process,
// as net/http does per connection and fasthttp does not: the panic is logged
// once with its stack and counted, the client gets a 500 if nothing was sent
// yet, and its connection is closed, since whatever the panic interrupted may
// have left the connection's state half-written.
func Recover(next fasthttp.RequestHandler, log *slog.Logger) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		defer func() {
			if v := recover(); v != nil {
				logPanic(log, v, "serving a request", "uri", string(ctx.RequestURI()), "remote", ctx.RemoteAddr().String())
				ctx.Response.Reset()
				ctx.Response.SetStatusCode(fasthttp.StatusInternalServerError)
				ctx.Response.SetBodyString("internal server error\n")
				ctx.SetConnectionClose()
			}
		}()
		next(ctx)
	}
}

// RecoverConn is deferred by each goroutine the front starts for one
// connection (sorting h2c from HTTP/1, an upgraded h2c connection, a hijacked
// stream): a panic there ends that connection only.
func RecoverConn(c net.Conn, what string) {
	if v := recover(); v != nil {
		logPanic(slog.Default(), v, what, "remote", c.RemoteAddr().String())
		c.Close()
	}
}

// recoverStd is deferred by the net/http handler: the panic is counted and
// logged like the others, then handed to net/http as ErrAbortHandler, which
// closes the connection (or resets the HTTP/2 stream) without a second log.
func recoverStd(r *http.Request) {
	if v := recover(); v != nil {
		if v == http.ErrAbortHandler {
			panic(v)
		}
		logPanic(slog.Default(), v, "serving a request", "uri", r.RequestURI, "remote", r.RemoteAddr)
		panic(http.ErrAbortHandler)
	}
}

func logPanic(log *slog.Logger, v any, what string, attrs ...any) {
	panics.Add(1)
	log.Error("panic "+what+": connection closed, the server goes on",
		append(attrs, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))...)
}
