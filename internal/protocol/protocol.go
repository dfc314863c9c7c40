// Package protocol is the seam between Ferry's front and the PHP side of a
// worker: everything that depends on which protocol the workers speak, from
// the handshake to the bytes of a request and an answer, is one Protocol.
// Ferry's own (ferryproto) and RoadRunner's (rrproto) are its two
// implementations; cmd/ferry picks one by pool.protocol, and the gateway,
// pool and relay only ever call the interface. A third protocol is one more
// package implementing it.
//
// The frames themselves (internal/frame) are shared: a protocol decides what
// goes in their flags, options and payload, not how they are framed.
package protocol

import (
	"os"

	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/valyala/fasthttp"
)

// Protocol is one way of talking to PHP workers. Implementations hold no
// per-request state: one value serves every worker and request at once, and
// its methods are called on the hot path, so they must not allocate beyond
// the buffers they are given.
type Protocol interface {
	// Name is the pool.protocol value that selects it.
	Name() string
	// Traits are what the pool and relay plan around; fixed for a protocol.
	Traits() Traits

	// Env is the worker's environment: env plus what tells the worker where
	// its relay is (relay: "pipes:3,4", "unix://...", "tcp://...") and the
	// token it must present in its handshake, if the protocol has one.
	Env(env []string, relay, token string) []string

	// AppendJob appends the frame that hands a worker one job.
	AppendJob(buf []byte, id uint32, ctx, body []byte) []byte
	// ReadAnswer checks a worker's frame that is not CONTROL. The frame is
	// passed by value: a pointer through an interface would move every frame
	// the pool reads to the heap.
	ReadAnswer(f frame.Frame) (Answer, error)
	// Stopped reports an answer that is the worker's refusal of the job: it
	// stops and serves neither it nor any job written after it.
	Stopped(ctx, body []byte) bool
	// AppendStop appends the frame that asks the worker to end the streamed
	// answer of job id (a client gone, a shutdown).
	AppendStop(buf []byte, id uint32) []byte
	// AppendCancel appends the frame that asks a Fiber worker to end job id
	// where it waits; why is "exec_ttl" or "client" (its client left).
	AppendCancel(buf []byte, id uint32, why string) []byte
	// AppendPong appends the answer to a ping.
	AppendPong(buf []byte) []byte

	// ParsesMultipart tells whether the gateway reads a multipart body of a
	// request with this method into Request.Form and Request.Files.
	ParsesMultipart(method []byte) bool
	// EncodeRequest builds a job from a request: its context, appended to
	// buf, and its body. An error is the server's (a spool file unreadable).
	EncodeRequest(buf []byte, r Request) (ctx, body []byte, err error)
	// WriteAnswer turns an answer (or a streamed answer's final head, with a
	// nil body) into resp, refusing through CheckHeader anything that would
	// corrupt the response. A non-nil File is the body to send instead.
	WriteAnswer(resp *fasthttp.Response, head, body []byte) (*File, error)
	// PartStatus is the status of one part's head of a streamed answer.
	PartStatus(head []byte) (int, error)
	// PartHeaders calls fn with each header of a part's head, for the
	// informational (1xx) parts the gateway writes itself.
	PartHeaders(head []byte, fn func(k, v []byte) error) error
}

// Answer is what ReadAnswer finds in a worker's frame.
type Answer struct {
	CtxLen uint32 // the head's length at the start of the payload
	ID     uint32 // the job's; 0 when Traits.InOrder
	Part   bool   // one part of a streamed answer, more to come
	Ping   bool   // the worker asks for a pong
}

// Traits are the differences the pool and relay plan around rather than
// delegate.
type Traits struct {
	// InOrder: answers name no job; each belongs to the oldest job written
	// to the worker and not yet answered.
	InOrder bool
	// Sequential: a worker runs one job at a time, never several in Fibers.
	Sequential bool
	// Finishing: an answer may say the worker runs hooks after it
	// (frame.Finishing), during which it takes no job.
	Finishing bool
	// FileAnswers: an answer may name a file in the worker's spool directory
	// for the server to send.
	FileAnswers bool
	// ByPID: the worker presents its pid alone in the handshake, no token; on
	// a socket its connection is matched to the process by that pid.
	ByPID bool
	// Stdio: the "pipes" relay is the worker's stdin and stdout.
	Stdio bool
}

// Request is what the gateway hands a protocol to encode. It is passed by
// value so that calling through the interface moves nothing to the heap.
type Request struct {
	Ctx   *fasthttp.RequestCtx
	Front Front
	// Form and Files are a multipart body read by the gateway (Multipart).
	Form      [][2]string
	Files     []multipart.Upload
	Multipart bool
	// Body is the body held in memory; BodyFile, when not "", is where a
	// body above body_buffer_size was spooled instead.
	Body     []byte
	BodyFile string
}

// Bytes returns the whole body, reading it back from its spool file.
func (r *Request) Bytes() ([]byte, error) {
	if r.BodyFile == "" {
		return r.Body, nil
	}
	return os.ReadFile(r.BodyFile)
}

// Front is what the gateway knows of a request beyond its bytes.
type Front interface {
	// Client is the client's address, the host it asked for and whether it
	// came over TLS, as the trusted proxies (server.trusted_proxies) report
	// them; host is the Host the request itself names.
	Client(ctx *fasthttp.RequestCtx, host []byte) (remote string, _ []byte, tls bool)
	// AppendPHP appends the request as PHP would see it in $_SERVER,
	// $_COOKIE, $_POST and $_FILES, serialized (docs/protocol.md): the
	// cookie and header rules it applies are the front's, shared with its
	// net/http side.
	AppendPHP(buf []byte, r Request) []byte
}

// File is a response body the server reads from a file instead of the worker
// sending it (docs/protocol.md, "file"): downloads and spooled output never
// sit whole in PHP's memory nor cross the relay.
type File struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Length *int64 `json:"length"` // absent: to the end of the file
	Delete bool   `json:"delete"`
}
