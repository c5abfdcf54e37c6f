package sqlsanitizerprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/internal/metadata"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, component.MustNewType("sqlsanitizer"), f.Type())
	assert.Equal(t, component.StabilityLevelDevelopment, f.TracesStability())
	assert.Equal(t, component.StabilityLevelDevelopment, f.LogsStability())
	require.NoError(t, componenttest.CheckConfigStruct(f.CreateDefaultConfig()))

	_, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), consumertest.NewNop())
	require.ErrorIs(t, err, pipeline.ErrSignalNotSupported)
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	ctx := context.Background()
	set := processortest.NewNopSettings(metadata.Type)

	tp, err := f.CreateTraces(ctx, set, f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	assert.True(t, tp.Capabilities().MutatesData)
	require.NoError(t, tp.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, tp.ConsumeTraces(ctx, dbSpan("postgresql", "SELECT 1")))
	require.NoError(t, tp.Shutdown(ctx))

	lp, err := f.CreateLogs(ctx, set, f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, lp.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, lp.ConsumeLogs(ctx, dbLog("mysql", "SELECT 1")))
	require.NoError(t, lp.Shutdown(ctx))
}
