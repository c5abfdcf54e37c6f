package fakeprovider

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// embeddingsRequest is the part of an embeddings request the server reads.
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          embeddingsInput `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

// embeddingsInput accepts a string or an array of strings (token arrays
// are not represented).
type embeddingsInput []string

func (in *embeddingsInput) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*in = embeddingsInput{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("input must be a string or an array of strings")
	}
	*in = list
	return nil
}

const (
	defaultDimensions = 1536 // text-embedding-3-small's
	maxDimensions     = 3072
	maxEmbedInputs    = 2048
)

type (
	embeddingsResponse struct {
		Object string          `json:"object"`
		Data   []embeddingItem `json:"data"`
		Model  string          `json:"model"`
		Usage  *embedUsage     `json:"usage,omitempty"`
	}
	embeddingItem struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"` // []float32, or base64 of little-endian float32s
	}
	embedUsage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	}
)

// embeddings answers POST /v1/embeddings with deterministic unit vectors
// (a hash of the snapshot and the text), as float arrays or base64 — the
// official SDKs ask for base64 by default.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, apiErr := s.readBody(w, r)
	if apiErr != nil {
		apiErr.write(w, nil)
		return
	}
	var req embeddingsRequest
	if err := json.Unmarshal(body, &req); err != nil {
		invalidJSON().write(w, nil)
		return
	}
	if req.Model == "" {
		BadRequest("model", "missing_required_parameter", "you must provide a model parameter").write(w, nil)
		return
	}
	model, ok := s.lookupModel(req.Model)
	if !ok {
		modelNotFound(req.Model).write(w, nil)
		return
	}
	dims := defaultDimensions
	switch {
	case len(req.Input) == 0 || len(req.Input) > maxEmbedInputs:
		BadRequest("input", "invalid_value", "'input' must be a non-empty string or an array of at most 2048 strings.").write(w, nil)
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		BadRequest("encoding_format", "invalid_value", "Invalid value for 'encoding_format': expected 'float' or 'base64'.").write(w, nil)
		return
	case req.Dimensions != nil:
		if *req.Dimensions < 1 || *req.Dimensions > maxDimensions {
			BadRequest("dimensions", "invalid_value", "Invalid 'dimensions': must be between 1 and 3072.").write(w, nil)
			return
		}
		dims = *req.Dimensions
	}
	resp := embeddingsResponse{Object: "list", Model: model.Snapshot}
	tokens := 0
	for i, text := range req.Input {
		tokens += countTokens(text)
		vec := embed(model.Snapshot, text, dims)
		item := embeddingItem{Object: "embedding", Index: i, Embedding: vec}
		if req.EncodingFormat == "base64" {
			raw := make([]byte, 4*len(vec))
			for j, f := range vec {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(f))
			}
			item.Embedding = base64.StdEncoding.EncodeToString(raw)
		}
		resp.Data = append(resp.Data, item)
	}
	comp := &completion{snapshot: model.Snapshot, requested: req.Model}
	if !s.missingUsage.next() {
		resp.Usage = &embedUsage{PromptTokens: tokens, TotalTokens: tokens}
		comp.usage = &tokenUsage{prompt: tokens}
	}
	prompt := make([]Message, len(req.Input))
	for i, text := range req.Input {
		prompt[i] = Message{Role: "user", Text: text}
	}
	s.record("embeddings", false, start, comp, prompt, "")
	w.Header().Set("openai-processing-ms", strconv.FormatInt(time.Since(start).Milliseconds(), 10))
	writeJSON(w, http.StatusOK, resp)
}

// embed returns a deterministic unit vector for text.
func embed(snapshot, text string, dims int) []float32 {
	h := sha256.New()
	writeField(h, snapshot)
	writeField(h, text)
	sum := h.Sum(nil)
	rng := rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
	vec := make([]float32, dims)
	var norm float64
	for i := range vec {
		f := rng.NormFloat64()
		vec[i] = float32(f)
		norm += f * f
	}
	norm = math.Sqrt(norm)
	for i := range vec {
		vec[i] = float32(float64(vec[i]) / norm)
	}
	return vec
}
