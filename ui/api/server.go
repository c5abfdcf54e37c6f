package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
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
	s := &Server{srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}}
	if useTLS {
		cert, err := tls.LoadX509KeyPair(l.TLSCertFile, l.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("ui: tls: %w", err)
		}
		s.srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return nil, fmt.Errorf("ui: listen: %w", err)
	}
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
