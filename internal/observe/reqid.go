package observe

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// RequestIDHeader is read from the client, passed to PHP (HTTP_X_REQUEST_ID)
// and echoed in the response.
const RequestIDHeader = "X-Request-Id"

// maxRequestID bounds an id a client sends: it goes into logs and PHP.
const maxRequestID = 128

// ids makes request ids unique across restarts without a syscall per request:
// a random prefix drawn once per process, then a counter.
type ids struct {
	prefix [17]byte // 16 hex digits and a dash
	n      atomic.Uint64
}

func newIDs() *ids {
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("observe: no randomness for request ids: " + err.Error())
	}
	g := &ids{}
	hex.Encode(g.prefix[:16], raw[:])
	g.prefix[16] = '-'
	return g
}

// next appends a new id to dst.
func (g *ids) next(dst []byte) []byte {
	dst = append(dst, g.prefix[:]...)
	return strconv.AppendUint(dst, g.n.Add(1), 36)
}

// validRequestID accepts what is safe to log and to pass on as a header:
// bounded, and only letters, digits and -_.:/+=@ (UUIDs, ULIDs, base64,
// trace ids).
func validRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > maxRequestID {
		return false
	}
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=' || c == '@':
		default:
			return false
		}
	}
	return true
}
