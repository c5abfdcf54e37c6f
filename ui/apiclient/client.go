// Package apiclient is a Go client of the evidence UI's JSON API, for
// tools and integrations (ticketing systems, benchmarks) that sign in as
// a built-in user.
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

// Client holds one signed-in session.
type Client struct {
	base   string
	http   *http.Client
	cookie *http.Cookie
	csrf   string
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
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %s", ErrNotFound, e.Error)
	}
	return fmt.Errorf("%s: %s", resp.Status, e.Error)
}
