package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Listener is where and how the UI is served.
type Listener struct {
	Addr string
	// TLSCertFile and TLSKeyFile serve HTTPS; both or neither.
	TLSCertFile string
	TLSKeyFile  string
	// BehindProxy: an authenticating proxy terminates TLS, so plain HTTP
	// on a non-loopback address is acceptable.
	BehindProxy bool
	// MaxConnections caps the open connections (DefaultMaxConnections if
	// 0); further clients wait in the kernel's accept queue. The UI shares
	// its process, and so its file descriptors, with OTLP ingest.
	MaxConnections int
	// Timeouts: DefaultTimeouts where zero.
	Timeouts Timeouts
}

// Timeouts bound how long a client may hold a connection without making
// progress. Downloads and exports run longer than Write through their own
// per-request deadlines (see extendWrites).
type Timeouts struct {
	// ReadHeader is the time to send a request's headers, Read the time
	// for the whole request with its body (bodies are at most 64 KiB).
	ReadHeader time.Duration
	Read       time.Duration
	// Write is the time to answer a request once its headers are read.
	Write time.Duration
	// Idle is how long a kept-alive connection may wait for its next request.
	Idle time.Duration
}

// Defaults of Listener.
const DefaultMaxConnections = 512

// DefaultTimeouts are generous for people on slow links and short for a
// client that holds a connection without sending.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: time.Minute, Idle: 2 * time.Minute}

func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts
	if t.ReadHeader > 0 {
		d.ReadHeader = t.ReadHeader
	}
	if t.Read > 0 {
		d.Read = t.Read
	}
	if t.Write > 0 {
		d.Write = t.Write
	}
	if t.Idle > 0 {
		d.Idle = t.Idle
	}
	return d
}

// Server is the UI's HTTP server.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Listen binds l and serves h. Session cookies and passwords must not
// cross a network in clear text, so a non-loopback address needs TLS or
// an authenticating proxy in front.
func Listen(l Listener, h http.Handler, logger *slog.Logger) (*Server, error) {
	host, _, err := net.SplitHostPort(l.Addr)
	if err != nil {
		return nil, fmt.Errorf("ui: listen address %q: %w", l.Addr, err)
	}
	useTLS := l.TLSCertFile != "" || l.TLSKeyFile != ""
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) && !useTLS && !l.BehindProxy {
		return nil, fmt.Errorf("ui: listen address %q is not loopback: configure TLS, or the proxy auth mode", l.Addr)
	}
	t := l.Timeouts.withDefaults()
	s := &Server{srv: &http.Server{
		Handler:           withWriteTimeout(h, t.Write),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}}
	if useTLS {
		cert, tlsErr := tls.LoadX509KeyPair(l.TLSCertFile, l.TLSKeyFile)
		if tlsErr != nil {
			return nil, fmt.Errorf("ui: tls: %w", tlsErr)
		}
		s.srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return nil, fmt.Errorf("ui: listen: %w", err)
	}
	maxConns := l.MaxConnections
	if maxConns <= 0 {
		maxConns = DefaultMaxConnections
	}
	// Below TLS, so that a handshake that never completes holds a slot
	// (bounded by the read deadlines), not a descriptor beyond the cap.
	ln = netutil.LimitListener(ln, maxConns)
	if useTLS {
		ln = tls.NewListener(ln, s.srv.TLSConfig)
	}
	s.ln = ln
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("ui: serve", "err", err)
		}
	}()
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops the server.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

type writeTimeoutKey struct{}

// withWriteTimeout tells handlers the server's write timeout, which long
// answers renew as they make progress.
func withWriteTimeout(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), writeTimeoutKey{}, d)))
	})
}

// extendWrites lifts the write deadline of r's connection for work that
// takes long before it answers (an export), and returns a writer for a long
// answer (a download) that renews the deadline before every write: the
// answer runs as long as the client keeps reading (32 KiB per write
// timeout), and a client that stops reading for the write timeout is cut
// off.
func extendWrites(w http.ResponseWriter, r *http.Request) io.Writer {
	d, ok := r.Context().Value(writeTimeoutKey{}).(time.Duration)
	if !ok {
		return w
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	return &progressWriter{w: w, rc: rc, d: d}
}

type progressWriter struct {
	w  io.Writer
	rc *http.ResponseController
	d  time.Duration
}

// progressPiece is the most a client must accept within one write timeout.
const progressPiece = 32 << 10

func (p *progressWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		piece := b[:min(len(b), progressPiece)]
		if err := p.rc.SetWriteDeadline(time.Now().Add(p.d)); err != nil {
			return written, fmt.Errorf("ui: renew write deadline: %w", err)
		}
		n, err := p.w.Write(piece)
		written += n
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}
