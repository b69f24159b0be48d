package openaiwire

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
)

// MaxEmbeddingInputs is the most texts one embeddings request may hold (OpenAI's limit).
const MaxEmbeddingInputs = 2048

// EmbeddingsRequest is an embeddings request as a server reads it.
type EmbeddingsRequest struct {
	Model string
	// Input holds the texts, one or many.
	Input []string
	// Base64 says the vectors go back as base64 of little-endian float32s (encoding_format "base64").
	Base64 bool
	// Dimensions is the vector size asked for (0 when not given).
	Dimensions int
}

// DecodeEmbeddingsRequest reads and checks an embeddings request; a refusal is a *Rejection. Input given as token
// IDs is refused: this server embeds text.
func DecodeEmbeddingsRequest(body []byte) (EmbeddingsRequest, error) {
	var w struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int            `json:"dimensions"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&w); err != nil {
		return EmbeddingsRequest{}, reject("", "We could not parse the JSON body of your request. (%v)", err)
	}
	if w.Model == "" {
		return EmbeddingsRequest{}, reject("model", "you must provide a model parameter")
	}
	req := EmbeddingsRequest{Model: w.Model}
	switch w.EncodingFormat {
	case "", "float":
	case "base64":
		req.Base64 = true
	default:
		return EmbeddingsRequest{}, reject("encoding_format", "Invalid value for 'encoding_format': expected 'float' or 'base64'.")
	}
	if w.Dimensions != nil {
		if *w.Dimensions < 1 {
			return EmbeddingsRequest{}, reject("dimensions", "Invalid value for 'dimensions': it must be at least 1.")
		}
		req.Dimensions = *w.Dimensions
	}
	var one string
	switch {
	case len(w.Input) == 0 || string(w.Input) == "null":
		return EmbeddingsRequest{}, reject("input", "you must provide an input parameter")
	case json.Unmarshal(w.Input, &one) == nil:
		req.Input = []string{one}
	case json.Unmarshal(w.Input, &req.Input) == nil:
	default:
		return EmbeddingsRequest{}, reject("input", "Invalid type for 'input': expected a string or an array of strings (token IDs are not taken here).")
	}
	if len(req.Input) == 0 || len(req.Input) > MaxEmbeddingInputs {
		return EmbeddingsRequest{}, reject("input", "Invalid value for 'input': give 1 to %d texts.", MaxEmbeddingInputs)
	}
	for i, s := range req.Input {
		if s == "" {
			return EmbeddingsRequest{}, reject("input", "Invalid value for 'input[%d]': it must not be empty.", i)
		}
	}
	return req, nil
}

// Embedding is one vector of an embeddings list: numbers, or their base64.
type Embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// EmbeddingsList is the answer to an embeddings request.
type EmbeddingsList struct {
	Object string      `json:"object"`
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// NewEmbeddingsList builds the answer: vectors in the order of the input, as numbers or base64.
func NewEmbeddingsList(model string, vectors [][]float32, asBase64 bool, promptTokens int) EmbeddingsList {
	out := EmbeddingsList{Object: "list", Model: model, Data: make([]Embedding, len(vectors))}
	for i, v := range vectors {
		var e any = v
		if asBase64 {
			raw := make([]byte, 4*len(v))
			for k, x := range v {
				binary.LittleEndian.PutUint32(raw[4*k:], math.Float32bits(x))
			}
			e = base64.StdEncoding.EncodeToString(raw)
		}
		out.Data[i] = Embedding{Object: "embedding", Index: i, Embedding: e}
	}
	out.Usage.PromptTokens, out.Usage.TotalTokens = promptTokens, promptTokens
	return out
}
