package distribution

import (
	"fmt"
	"strings"
	"testing"
)

// Analyze of 20 outputs of about 2 KB, five distinct, with a tokenizer.
func BenchmarkAnalyze(b *testing.B) {
	orig := strings.Repeat("The refund for order 42 takes five business days. ", 40)
	outputs := make([]string, 20)
	for i := range outputs {
		outputs[i] = strings.Replace(orig, "five", fmt.Sprint("five", i%5), 1)
	}
	outputs[0] = orig
	for b.Loop() {
		Analyze(orig, outputs, Options{Tokenizer: words{}})
	}
}
