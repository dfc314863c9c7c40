package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Config says where and how spans are sent. FromEnv fills it the way the
// OpenTelemetry SDK read its environment, so a deployment tuned for the SDK
// keeps its settings.
type Config struct {
	Endpoint      string            // the collector's OTLP/HTTP traces URL
	Headers       map[string]string // sent with every export (an API key)
	Gzip          bool              // Content-Encoding: gzip
	Timeout       time.Duration     // one POST
	ExportTimeout time.Duration     // one batch, retries included
	ScheduleDelay time.Duration     // how long a span waits for its batch to fill
	MaxQueue      int               // spans waiting beyond this are dropped
	MaxBatch      int               // spans per POST
	TLS           *tls.Config       // nil: the system's roots, no client certificate
}

// The SDK's defaults, from the OpenTelemetry environment variable spec.
func defaults(endpoint string) Config {
	return Config{Endpoint: endpoint, Headers: map[string]string{}, Timeout: 10 * time.Second,
		ExportTimeout: 30 * time.Second, ScheduleDelay: 5 * time.Second, MaxQueue: 2048, MaxBatch: 512}
}

// FromEnv reads OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT,
// OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE and
// OTEL_EXPORTER_OTLP[_TRACES]_{HEADERS,TIMEOUT,COMPRESSION,CERTIFICATE,
// CLIENT_CERTIFICATE,CLIENT_KEY} over the
// defaults; the endpoint is Ferry's setting, not the environment's. A value
// that does not parse leaves the default and is named in warnings, as the
// SDK logged and ignored it.
func FromEnv(endpoint string, getenv func(string) string) (c Config, warnings []string) {
	c = defaults(endpoint)
	ms := func(name string, d *time.Duration) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				warnings = append(warnings, fmt.Sprintf("%s=%q is not a number of milliseconds: ignored", name, v))
				return
			}
			if n > 0 {
				*d = time.Duration(n) * time.Millisecond
			}
		}
	}
	count := func(name string, p *int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 {
				warnings = append(warnings, fmt.Sprintf("%s=%q is not a positive number: ignored", name, v))
				return
			}
			*p = n
		}
	}
	// The traces-only variable wins over the one for every signal.
	either := func(suffix string) (string, string) {
		if v := getenv("OTEL_EXPORTER_OTLP_TRACES_" + suffix); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + suffix, v
		}
		return "OTEL_EXPORTER_OTLP_" + suffix, getenv("OTEL_EXPORTER_OTLP_" + suffix)
	}
	ms("OTEL_BSP_SCHEDULE_DELAY", &c.ScheduleDelay)
	ms("OTEL_BSP_EXPORT_TIMEOUT", &c.ExportTimeout)
	count("OTEL_BSP_MAX_QUEUE_SIZE", &c.MaxQueue)
	count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &c.MaxBatch)
	c.MaxBatch = min(c.MaxBatch, c.MaxQueue)
	if name, v := either("TIMEOUT"); v != "" {
		ms(name, &c.Timeout)
	}
	if name, v := either("HEADERS"); v != "" {
		h, err := ParsePairs(v)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v: ignored", name, err))
		}
		for k, v := range h {
			// Go's client refuses a whole request for one bad header.
			if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
				warnings = append(warnings, fmt.Sprintf("%s: %q is not a valid HTTP header: ignored", name, k))
				continue
			}
			c.Headers[k] = v
		}
	}
	if w := c.readTLS(either); w != "" {
		warnings = append(warnings, w)
	}
	if name, v := either("COMPRESSION"); v != "" {
		switch strings.TrimSpace(v) {
		case "gzip":
			c.Gzip = true
		case "none":
		default:
			warnings = append(warnings, fmt.Sprintf("%s=%q is neither gzip nor none: ignored", name, v))
		}
	}
	return c, warnings
}

// readTLS loads OTEL_EXPORTER_OTLP[_TRACES]_CERTIFICATE (PEM roots to trust
// instead of the system's) and _CLIENT_CERTIFICATE with _CLIENT_KEY (for
// a collector that asks for mutual TLS).
func (c *Config) readTLS(either func(string) (string, string)) (warning string) {
	caName, ca := either("CERTIFICATE")
	certName, cert := either("CLIENT_CERTIFICATE")
	keyName, key := either("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return ""
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return fmt.Sprintf("%s: %v: ignored", caName, err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Sprintf("%s: no PEM certificate in %s: ignored", caName, ca)
		}
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return fmt.Sprintf("%s and %s: %v: ignored", certName, keyName, err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	c.TLS = t
	return ""
}

// ParsePairs reads the W3C Baggage-like list OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES are written in: key=value pairs separated by
// commas, values percent-encoded. A malformed pair is skipped and reported;
// the others are kept.
func ParsePairs(s string) (map[string]string, error) {
	out := map[string]string{}
	var bad []string
	for p := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if ok {
			var err error
			v, err = url.PathUnescape(strings.TrimSpace(v))
			ok = err == nil
		}
		if !ok || k == "" || !printable(k) || !printable(v) {
			bad = append(bad, strconv.Quote(p))
			continue
		}
		out[k] = v
	}
	if bad != nil {
		return out, fmt.Errorf("malformed key=value pairs %s", strings.Join(bad, ", "))
	}
	return out, nil
}

// printable keeps control bytes out of a resource attribute or a header.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
