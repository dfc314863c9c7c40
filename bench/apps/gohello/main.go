// Command gohello is the benchmark ceiling: the hello response served by Go alone,
// without PHP. -stack fasthttp is the like-for-like ceiling (Ferry's gateway is
// fasthttp); -stack nethttp shows where the standard library stands.
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (host:port)")
	stack := flag.String("stack", "fasthttp", "fasthttp or nethttp")
	flag.Parse()
	body := []byte("Hello, world\n")
	switch *stack {
	case "fasthttp":
		log.Fatal((&fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBody(body)
		}}).ListenAndServe(*addr))
	case "nethttp":
		handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write(body)
		})
		srv := &http.Server{Addr: *addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		log.Fatal(srv.ListenAndServe())
	default:
		log.Fatalf("unknown -stack %q", *stack)
	}
}
