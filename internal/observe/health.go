package observe

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// Health answers /health (is the server alive and able to serve) and /ready
// (should a load balancer send it requests).
type Health struct {
	accepting func() int // workers taking jobs
	booted    atomic.Bool
	draining  atomic.Bool
}

// NewHealth reads the number of workers taking jobs from accepting.
func NewHealth(accepting func() int) *Health { return &Health{accepting: accepting} }

// Booted marks the first generation of workers up: /ready may say yes.
func (h *Health) Booted() { h.booted.Store(true) }

// Drain turns /ready to 503 for good: the server is stopping.
func (h *Health) Drain() { h.draining.Store(true) }

// Register adds GET /health and GET /ready to mux.
func (h *Health) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /health", h.health)
	mux.HandleFunc("GET /ready", h.ready)
}

func (h *Health) health(w http.ResponseWriter, _ *http.Request) {
	n := h.accepting()
	if n == 0 {
		http.Error(w, "no ready worker", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, "ok: %d workers ready\n", n)
}

func (h *Health) ready(w http.ResponseWriter, _ *http.Request) {
	switch {
	case h.draining.Load():
		http.Error(w, "draining: shutting down", http.StatusServiceUnavailable)
	case !h.booted.Load():
		http.Error(w, "starting: workers booting", http.StatusServiceUnavailable)
	case h.accepting() == 0:
		http.Error(w, "no ready worker", http.StatusServiceUnavailable)
	default:
		fmt.Fprintln(w, "ready")
	}
}
