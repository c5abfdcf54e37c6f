package s3test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func TestServerKeepsDataAcrossRestart(t *testing.T) {
	srv := Start(t)
	client, err := minio.New(srv.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := client.MakeBucket(ctx, "kept", minio.MakeBucketOptions{ObjectLocking: true}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if _, err := client.BucketExists(ctx, "kept"); err == nil {
		t.Fatal("server still answering after Stop")
	}
	srv.Restart()
	if ok, err := client.BucketExists(ctx, "kept"); err != nil || !ok {
		t.Fatalf("bucket after restart: %v %v", ok, err)
	}
}

func TestMissingBinary(t *testing.T) {
	if os.Getenv("S3TEST_CHILD") != "" {
		Binary(t)
		return
	}
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingBinary$", "-test.v")
		cmd.Env = append(os.Environ(), "S3TEST_CHILD=1", "VERSITYGW_BIN=/nonexistent/versitygw", "CI="+ci)
		out, err := cmd.CombinedOutput()
		switch {
		case ci == "" && (err != nil || !strings.Contains(string(out), "--- SKIP")):
			t.Errorf("without CI a missing binary must skip: %v\n%s", err, out)
		case ci != "" && (err == nil || !strings.Contains(string(out), "CI is set")):
			t.Errorf("with CI a missing binary must fail: %v\n%s", err, out)
		}
	}
}
