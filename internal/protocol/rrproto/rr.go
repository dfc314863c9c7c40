// Package rrproto is RoadRunner's worker protocol (docs/roadrunner.md), so
// that workers built on spiral/roadrunner-worker and roadrunner-http serve
// under Ferry unchanged: the handshake by pid, jobs answered in order, the
// request as http.v1.Request (protobuf, wire.go) or the older JSON context,
// form fields and uploads as JSON trees (tree.go), the answer as
// http.v1.Response or JSON, streamed chunks with PING/PONG and STOP.
package rrproto

import (
	"github.com/ferry-php/ferry/internal/protocol"
)

// Version is the RoadRunner release whose worker protocol Ferry speaks,
// given to workers as RR_VERSION.
const Version = "2025.1.0"

// Codec is how the request context is encoded.
type Codec uint8

const (
	// Proto: http.v1.Request in protobuf, as RoadRunner 2023.3 and later send it.
	Proto Codec = iota + 1
	// JSON: the JSON context of roadrunner-http before 3.5.
	JSON
)

// Protocol is RoadRunner's side of the worker protocol with one codec.
type Protocol struct{ codec Codec }

// New returns the protocol sending request contexts in codec.
func New(codec Codec) *Protocol { return &Protocol{codec: codec} }

var _ protocol.Protocol = (*Protocol)(nil)

// Name is the pool.protocol value.
func (p *Protocol) Name() string {
	if p.codec == JSON {
		return "roadrunner-json"
	}
	return "roadrunner"
}

// Traits: a RoadRunner worker reads one frame at a time and answers it, has
// no hooks after an answer nor file answers, presents its pid alone, and
// takes "pipes" as its stdin and stdout.
func (*Protocol) Traits() protocol.Traits {
	return protocol.Traits{InOrder: true, Sequential: true, ByPID: true, Stdio: true}
}

// Env: RR_RELAY is where the relay is; RR_MODE tells
// Spiral\RoadRunner\Environment which plugin runs the worker (http).
func (*Protocol) Env(env []string, relay, _ string) []string {
	return append(env, "RR_RELAY="+relay, "RR_MODE=http", "RR_VERSION="+Version)
}

// ParsesMultipart: RoadRunner reads no form for HEAD and OPTIONS.
func (*Protocol) ParsesMultipart(method []byte) bool { return !noBody(method) }

func noBody(method []byte) bool { return string(method) == "HEAD" || string(method) == "OPTIONS" }
