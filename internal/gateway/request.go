package gateway

import (
	"net/http"
	"strings"
)

// upload is one spooled file part, sent as [field, client name, type, path, error, size].
type upload struct {
	field, name, ctype, path string
	size                     int64
}

// encodeRequest builds the job context described in docs/protocol.md.
func encodeRequest(buf []byte, r *http.Request, form [][2]string, files []upload, parsed bool) []byte {
	b := phpArray(buf).open(12)
	b = b.kv("method", r.Method)
	b = b.kv("uri", r.RequestURI)
	b = b.kv("path", r.URL.Path)
	b = b.kv("query", r.URL.RawQuery)
	b = b.kv("protocol", r.Proto)
	b = b.kv("remote_addr", r.RemoteAddr)
	b = b.kv("host", r.Host)

	b = b.str("headers").open(len(r.Header))
	for k, vs := range r.Header {
		b = b.str(k).list(vs)
	}
	b = b.close()

	b = b.str("cookies")
	b = appendCookies(b, r.Header["Cookie"])

	b = b.str("form").open(len(form))
	for i, kv := range form {
		b = b.int(int64(i)).open(2).int(0).str(kv[0]).int(1).str(kv[1]).close()
	}
	b = b.close()

	b = b.str("files").open(len(files))
	for i, f := range files {
		b = b.int(int64(i)).open(6).int(0).str(f.field).int(1).str(f.name).int(2).str(f.ctype).
			int(3).str(f.path).int(4).int(0).int(5).int(f.size).close()
	}
	b = b.close()

	b = b.str("parsed").bool(parsed)
	return b.close()
}

// appendCookies parses Cookie headers the way PHP fills $_COOKIE: the first
// occurrence of a name wins; values are passed as sent (PHP urldecodes them
// on its side, as it does for FPM).
func appendCookies(b phpArray, headers []string) phpArray {
	if len(headers) == 0 {
		return b.open(0).close()
	}
	var names, values []string
	seen := map[string]bool{}
	for _, h := range headers {
		for part := range strings.SplitSeq(h, ";") {
			part = strings.TrimSpace(part)
			name, value, _ := strings.Cut(part, "=")
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			names = append(names, name)
			values = append(values, value)
		}
	}
	b = b.open(len(names))
	for i := range names {
		b = b.kv(names[i], values[i])
	}
	return b.close()
}
