package listen

import (
	"crypto/tls"
	"fmt"
	"sync/atomic"
)

// Certs holds the HTTPS certificate and swaps it on Reload, so a renewed
// certificate is used by new handshakes while open connections go on.
type Certs struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// LoadCerts reads a PEM certificate chain and its key.
func LoadCerts(certFile, keyFile string) (*Certs, error) {
	c := &Certs{certFile: certFile, keyFile: keyFile}
	return c, c.Reload()
}

// Reload rereads the files; on error the certificate in use stays.
func (c *Certs) Reload() error {
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate %s / key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cur.Store(&pair)
	return nil
}

// TLSConfig offers HTTP/2 and HTTP/1.1 by ALPN, from TLS 1.2 up.
func (c *Certs) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cur.Load(), nil
		},
	}
}
