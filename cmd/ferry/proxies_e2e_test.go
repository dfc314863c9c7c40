package main

import (
	"net/http"
	"strings"
	"testing"
)

func TestTrustedProxies(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		extra := ""
		if trusted {
			extra = "  trusted_proxies: [127.0.0.1/32]"
		}
		s := startFerry(t, strings.Replace(appConfig(""), "max_body_size: 1MiB", "max_body_size: 1MiB\n"+extra, 1))
		req, _ := http.NewRequest("GET", s.url+"/echo", nil)
		req.Header.Set("X-Forwarded-For", "203.0.113.9, 127.0.0.1")
		req.Header.Set("X-Forwarded-Proto", "https")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		spoofed := strings.Contains(body, `"remote":"203.0.113.9`) || strings.Contains(body, `"scheme":"https"`)
		if spoofed != trusted {
			t.Fatalf("trusted=%v: forwarded headers applied=%v: %s", trusted, spoofed, body)
		}
		// RFC 7239, which wins over X-Forwarded-* when both come and agree.
		req, _ = http.NewRequest("GET", s.url+"/echo", nil)
		req.Header.Set("Forwarded", `for=198.51.100.7;proto=https;host=shop.example, for=127.0.0.1`)
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		resp, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body = readAll(t, resp)
		applied := strings.Contains(body, `"remote":"198.51.100.7`) && strings.Contains(body, `"scheme":"https"`) && strings.Contains(body, `"host":"shop.example"`)
		if applied != trusted || strings.Contains(body, `"remote":"203.0.113.9`) {
			t.Fatalf("trusted=%v: Forwarded applied=%v: %s", trusted, applied, body)
		}
		// When they name different clients, one is the client's word: neither counts.
		req, _ = http.NewRequest("GET", s.url+"/echo", nil)
		req.Header.Set("Forwarded", `for=198.51.100.7;proto=https;host=shop.example`)
		req.Header.Set("X-Forwarded-For", "203.0.113.9")
		resp, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body = readAll(t, resp)
		if !strings.Contains(body, `"remote":"127.0.0.1`) || strings.Contains(body, `"scheme":"https"`) {
			t.Fatalf("trusted=%v: conflicting Forwarded and X-Forwarded-For: %s", trusted, body)
		}
	}
}
