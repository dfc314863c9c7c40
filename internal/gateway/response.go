package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// answer is the response context a worker sends: {"status":N,"headers":{...}}.
type answer struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers"`
}

func writeAnswer(w http.ResponseWriter, ctx, body []byte) error {
	var a answer
	if len(ctx) > 0 {
		if err := json.Unmarshal(ctx, &a); err != nil {
			return fmt.Errorf("response context is not {\"status\",\"headers\"} JSON: %w", err)
		}
	}
	if a.Status == 0 {
		a.Status = http.StatusOK
	}
	if a.Status < 100 || a.Status > 999 {
		return fmt.Errorf("response status %d out of range", a.Status)
	}
	h := w.Header()
	for k, vs := range a.Headers {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	if _, ok := h["Content-Type"]; !ok && len(body) > 0 {
		h["Content-Type"] = []string{"text/html; charset=UTF-8"}
	}
	w.WriteHeader(a.Status)
	w.Write(body)
	return nil
}
