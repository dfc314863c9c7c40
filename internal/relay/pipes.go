package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/ferry-php/ferry/internal/protocol"
)

// pipes talks over two pipes created per worker. By default they are extra
// descriptors, so that anything PHP or an extension prints on stdout is log
// output and cannot corrupt the frame stream. stdio puts them on stdin/stdout
// instead, for workers that speak the protocol there.
type pipes struct {
	maxFrame uint32
	proto    protocol.Protocol
	stdio    bool
	byPID    bool // the worker presents no token (protocol.Traits.ByPID)
}

func (p pipes) Start(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error) {
	jobsR, jobsW, ansR, ansW, err := relayPipes()
	if err != nil {
		return nil, err
	}
	var token string
	if !p.byPID {
		token = newToken()
	}
	where := "pipes"
	if p.stdio {
		cmd.Stdin, cmd.Stdout = jobsR, ansW
	} else {
		if cmd.Stdout == nil {
			cmd.Stdout = cmd.Stderr
		}
		// ExtraFiles[i] becomes fd 3+i; the caller's own extra files keep theirs.
		fd := 3 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, jobsR, ansW)
		where = fmt.Sprintf("pipes:%d,%d", fd, fd+1)
	}
	cmd.Env = p.proto.Env(baseEnv(cmd), where, token)
	err = cmd.Start()
	// The worker holds its own copies now; keeping ours would hide its exit
	// (no EOF) from the handshake.
	jobsR.Close()
	ansW.Close()
	if err != nil {
		jobsW.Close()
		ansR.Close()
		return nil, &BootError{Reason: "cannot start the worker: " + err.Error()}
	}
	if started != nil {
		started()
	}
	return p.handshake(ctx, jobsW, ansR, token)
}

// handshake talks to a worker that holds the other ends of jobsW and ansR.
func (p pipes) handshake(ctx context.Context, jobsW, ansR *os.File, token string) (*Conn, error) {
	c := &Conn{w: jobsW, c: []io.Closer{jobsW, ansR}, dl: ansR}
	// Unblock the handshake read when ctx is cancelled early (the worker
	// exited) even if a grandchild still holds the pipe open.
	stop := context.AfterFunc(ctx, func() { ansR.SetReadDeadline(time.Unix(1, 0)) })
	deadline, _ := ctx.Deadline()
	h, err := handshake(c, ansR, p.maxFrame, deadline)
	if !stop() && err == nil {
		err = &BootError{Reason: "no handshake from the worker within allocate_timeout"}
	}
	if err == nil {
		err = p.checkToken(h.Token, token)
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			err = exitedBeforeHandshake(cause, err, ansR)
		}
		c.Close()
		return nil, err
	}
	return c, nil
}

// relayPipes makes the two pipes of a relay: jobs (the worker reads jobsR)
// and answers (it writes ansW).
func relayPipes() (jobsR, jobsW, ansR, ansW *os.File, err error) {
	if jobsR, jobsW, err = os.Pipe(); err != nil {
		return
	}
	if ansR, ansW, err = os.Pipe(); err != nil {
		jobsR.Close()
		jobsW.Close()
	}
	return
}

// StartForked connects to a worker forked by a zygote (internal/forkserver):
// launch hands it jobs and answers, the ends of its relay pipes, and returns
// once it exists; the worker then answers the handshake with token, as a
// worker started with FERRY_RELAY=pipes:3,4 would.
func StartForked(ctx context.Context, maxFrame uint32, token string, launch func(jobs, answers *os.File) error) (*Conn, error) {
	jobsR, jobsW, ansR, ansW, err := relayPipes()
	if err != nil {
		return nil, err
	}
	err = launch(jobsR, ansW)
	jobsR.Close()
	ansW.Close()
	if err != nil {
		jobsW.Close()
		ansR.Close()
		return nil, err
	}
	return pipes{maxFrame: maxFrame}.handshake(ctx, jobsW, ansR, token)
}

func (p pipes) checkToken(got, want string) error {
	switch {
	case got == "" && p.stdio, p.byPID:
		return nil // a foreign protocol may not know about tokens
	case got == "":
		return &BootError{Reason: "the worker answered the handshake without the token from FERRY_RELAY_TOKEN (a worker SDK older than the pipes:3,4 relay?)"}
	case !sameToken(got, want):
		return &BootError{Reason: "the worker answered the handshake with a token other than the FERRY_RELAY_TOKEN it was started with"}
	}
	return nil
}

func (pipes) Close() error { return nil }

// exitedBeforeHandshake names the exit as the cause, keeping what the worker
// printed first, read or not before the exit was noticed: that, not the exit,
// is what the user needs to see.
func exitedBeforeHandshake(cause, err error, ansR *os.File) error {
	be := &BootError{Reason: cause.Error() + " before the handshake"}
	var read *BootError
	if errors.As(err, &read) {
		be.Output = read.Output
	}
	if len(be.Output) == 0 {
		// The exit may have cut the read short before any byte: the pipe still
		// holds what the worker wrote before it went.
		ansR.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 4096)
		n, _ := io.ReadFull(ansR, buf)
		be.Output = clip(buf[:n])
	}
	return be
}
