// Package apiclient is a Go client of the evidence UI's JSON API, for
// tools and integrations (ticketing systems, benchmarks, the docket CLI
// against a running instance) that sign in as a built-in user or present
// a service account's API token.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client holds one signed-in session, or an API token.
type Client struct {
	base   string
	http   *http.Client
	cookie *http.Cookie
	csrf   string
	token  string
}

// ErrUnauthorized is the API's 401: not signed in, or a token that is
// invalid, expired or revoked.
var ErrUnauthorized = errors.New("apiclient: unauthorized")

// WithToken is a client of base that authenticates every request with a
// service account's API token (Authorization: Bearer). Requests have no
// overall timeout: an export runs as long as the server works on it, and
// the caller's context ends it.
func WithToken(base, token string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), http: &http.Client{}, token: token}
}

// ErrNotFound is the API's 404.
var ErrNotFound = errors.New("apiclient: not found")

// SignIn signs in at base (http://host:port) as user.
func SignIn(ctx context.Context, base, user, password string) (*Client, error) {
	c := &Client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: time.Minute}}
	body, err := json.Marshal(map[string]string{"user": user, "password": password})
	if err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, http.MethodPost, "/api/v1/session", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := check(resp); err != nil {
		return nil, fmt.Errorf("apiclient: sign in: %w", err)
	}
	var s struct {
		CSRFToken          string `json:"csrf_token"`
		MustChangePassword bool   `json:"must_change_password"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return nil, fmt.Errorf("apiclient: sign in: %w", err)
	}
	for _, ck := range resp.Cookies() {
		if ck.Value != "" {
			c.cookie = ck
		}
	}
	if c.cookie == nil {
		return nil, errors.New("apiclient: sign in: no session cookie")
	}
	if s.MustChangePassword {
		return nil, errors.New("apiclient: sign in: the password must be changed first (sign in once in the UI)")
	}
	c.csrf = s.CSRFToken
	return c, nil
}

// Get reads path into v.
func (c *Client) Get(ctx context.Context, path string, v any) error {
	resp, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := check(resp); err != nil {
		return fmt.Errorf("apiclient: GET %s: %w", path, err)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Post sends body as JSON and reads the answer into v (nil to drop it).
func (c *Client) Post(ctx context.Context, path string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := c.send(ctx, http.MethodPost, path, b)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err = check(resp); err != nil {
		return fmt.Errorf("apiclient: POST %s: %w", path, err)
	}
	if v == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Download writes the body of GET path to w and returns its size;
// progress, if set, is told the bytes received so far as they arrive.
func (c *Client) Download(ctx context.Context, path string, w io.Writer, progress func(int64)) (int64, error) {
	resp, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := check(resp); err != nil {
		return 0, fmt.Errorf("apiclient: GET %s: %w", path, err)
	}
	var n int64
	buf := make([]byte, 256<<10)
	for {
		k, rerr := resp.Body.Read(buf)
		if k > 0 {
			if _, err := w.Write(buf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
			if progress != nil {
				progress(n)
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, fmt.Errorf("apiclient: GET %s: %w", path, rerr)
		}
	}
}

// The session cookie is Secure; Go's cookie jar would not send it over
// plain HTTP to a loopback address (browsers do), so it is set by hand.
func (c *Client) send(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cookie != nil {
		req.AddCookie(&http.Cookie{Name: c.cookie.Name, Value: c.cookie.Value})
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.csrf != "" && method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("apiclient: %s %s: %w", method, path, err)
	}
	return resp, nil
}

func check(resp *http.Response) error {
	if resp.StatusCode < 300 {
		return nil
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
	switch resp.StatusCode {
	case http.StatusNotFound:
		return fmt.Errorf("%w: %s", ErrNotFound, e.Error)
	case http.StatusUnauthorized:
		return fmt.Errorf("%w: %s", ErrUnauthorized, e.Error)
	}
	return fmt.Errorf("%s: %s", resp.Status, e.Error)
}
