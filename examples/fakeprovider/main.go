// Command fakeprovider serves the local fake LLM provider (OpenAI Chat
// Completions and Responses, Anthropic Messages wire formats) on its own, so
// tools such as `docket replay` can be pointed at it with OPENAI_BASE_URL or
// ANTHROPIC_BASE_URL. With -vary-every N, every Nth answer to the same
// input ends differently, the way sampling makes a real model's answers
// drift: a replay then reports an exact-match rate of (N-1)/N and the
// divergence at the start of the last sentence. With -admin-key-file, it also
// serves OpenAI's organization Usage API and Anthropic's usage report, from
// what it answered, for `docket usage pull`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docketlabs/docket/fakeprovider"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8091", "address to serve on")
	varyEvery := flag.Int("vary-every", 0, "every Nth answer to the same input ends differently (0: always the same answer)")
	adminKeyFile := flag.String("admin-key-file", "", "serve the usage report endpoints to this admin key (a file holding it)")
	latency := flag.Duration("latency", 0, "time every model answer takes, as a real model's generation does (0: answer at once)")
	flag.Parse()
	if err := run(*listen, *varyEvery, *adminKeyFile, *latency); err != nil {
		slog.Error("fakeprovider failed", "err", err)
		os.Exit(1)
	}
}

func run(listen string, varyEvery int, adminKeyFile string, latency time.Duration) error {
	if varyEvery < 0 {
		return fmt.Errorf("-vary-every must not be negative")
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := fakeprovider.Config{Latency: latency}
	if varyEvery > 0 {
		cfg.Responder = varying(varyEvery)
	}
	slog.Info("fake provider listening", "addr", ln.Addr().String(), "base_url", "http://"+ln.Addr().String()+"/v1")
	if adminKeyFile == "" {
		return fakeprovider.Serve(ctx, ln, cfg)
	}
	key, err := os.ReadFile(adminKeyFile)
	if err != nil {
		return err
	}
	s, err := fakeprovider.New(cfg)
	if err != nil {
		return err
	}
	u, err := fakeprovider.NewUsage(s, fakeprovider.UsageConfig{AdminKey: strings.TrimSpace(string(key))})
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// varying wraps the deterministic answers: the nth answer to an input, for
// n divisible by every, gets another last sentence.
func varying(every int) fakeprovider.Responder {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(ctx context.Context, req *fakeprovider.Request) (fakeprovider.Reply, error) {
		reply, err := fakeprovider.Deterministic(ctx, req)
		if err != nil {
			return reply, err
		}
		key := reply.Text
		mu.Lock()
		seen[key]++
		n := seen[key]
		mu.Unlock()
		if n%every != 0 {
			return reply, nil
		}
		cut := strings.LastIndex(strings.TrimSuffix(reply.Text, "."), ". ")
		reply.Text = reply.Text[:cut+2] + fmt.Sprintf("Please contact support, variant %d.", n/every)
		return reply, nil
	}
}
