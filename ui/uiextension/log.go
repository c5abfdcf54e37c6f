package uiextension

import (
	"log/slog"

	"go.opentelemetry.io/collector/extension"
	"go.uber.org/zap/exp/zapslog"
)

func slogFrom(set extension.Settings) *slog.Logger {
	return slog.New(zapslog.NewHandler(set.Logger.Core()))
}
