package storage

import (
	"context"
	"encoding/json"
	"fmt"
)

// DecodeRows returns a QueryJSON callback that appends each row, decoded
// into a T, to *out.
func DecodeRows[T any](out *[]T) func(row []byte) error {
	return func(row []byte) error {
		var v T
		if err := json.Unmarshal(row, &v); err != nil {
			return fmt.Errorf("decode row: %w", err)
		}
		*out = append(*out, v)
		return nil
	}
}

// QueryRows binds params into query, runs it and decodes every row into a T.
func QueryRows[T any](ctx context.Context, e Engine, query string, params map[string]any) ([]T, error) {
	q, err := Bind(query, params)
	if err != nil {
		return nil, err
	}
	var out []T
	if err := e.QueryJSON(ctx, q, DecodeRows(&out)); err != nil {
		return nil, err
	}
	return out, nil
}
