package observe

import (
	"net"
	"os"
)

// Notifier speaks systemd's sd_notify protocol for Type=notify units: a
// datagram of KEY=VALUE lines to the socket named by $NOTIFY_SOCKET.
type Notifier struct{ addr string }

// NewNotifier takes $NOTIFY_SOCKET out of the environment, so the PHP workers
// started later do not inherit it, and returns nil when it was not set.
func NewNotifier() *Notifier {
	addr := os.Getenv("NOTIFY_SOCKET")
	os.Unsetenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	if addr[0] == '@' { // an abstract socket
		addr = "\x00" + addr[1:]
	}
	return &Notifier{addr: addr}
}

// Notify sends state, e.g. "READY=1"; a nil Notifier does nothing.
func (n *Notifier) Notify(state string) error {
	if n == nil {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}
