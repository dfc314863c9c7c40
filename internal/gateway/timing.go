package gateway

import (
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/valyala/fasthttp"
)

// timing keeps a request's job timing on its connection, where the access
// log and metrics that wrap the handler find it without a per-request
// allocation. It names the request it belongs to: a request answered without
// PHP (a static file, a rejection) must not show the previous one's.
type timing struct {
	req uint64 // fasthttp's RequestCtx.ID
	t   pool.Timing
}

func keepTiming(ctx *fasthttp.RequestCtx, t pool.Timing) {
	if c, ok := ctx.Conn().(*conn); ok {
		c.timing = timing{req: ctx.ID(), t: t}
	}
}

// JobTiming is how long the request's job waited and ran in PHP, and on which
// worker; zero for a request PHP did not answer.
func JobTiming(ctx *fasthttp.RequestCtx) pool.Timing {
	if c, ok := ctx.Conn().(*conn); ok && c.timing.req == ctx.ID() {
		return c.timing.t
	}
	return pool.Timing{}
}
