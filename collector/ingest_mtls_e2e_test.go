package collector_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/docketlabs/docket/internal/conventions"
)

// testCA issues the certificates of one test: a CA, the collector's server
// certificate for 127.0.0.1, and client certificates.
type testCA struct {
	t    *testing.T
	dir  string
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	ca := &testCA{t: t, dir: t.TempDir()}
	ca.key, ca.cert = ca.issue(&x509.Certificate{
		Subject: pkix.Name{CommonName: "docket e2e CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	})
	ca.pool = x509.NewCertPool()
	ca.pool.AddCert(ca.cert)
	ca.write("ca.crt", ca.cert, nil)
	return ca
}

// issue signs tmpl with the CA (itself when there is none yet).
func (ca *testCA) issue(tmpl *x509.Certificate) (*ecdsa.PrivateKey, *x509.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		ca.t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	parent, signer := tmpl, key
	if ca.cert != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		ca.t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		ca.t.Fatal(err)
	}
	return key, cert
}

// write stores a certificate (and its key, when given) as PEM in the CA's
// directory and returns the certificate's path.
func (ca *testCA) write(name string, cert *x509.Certificate, key *ecdsa.PrivateKey) string {
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		ca.t.Fatal(err)
	}
	if key != nil {
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			ca.t.Fatal(err)
		}
		if err := os.WriteFile(path+".key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			ca.t.Fatal(err)
		}
	}
	return path
}

// client returns the TLS config of a client presenting a certificate with
// these DNS names (none: no certificate).
func (ca *testCA) client(names ...string) *tls.Config {
	cfg := &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if len(names) > 0 {
		key, cert := ca.issue(&x509.Certificate{Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}}
	}
	return cfg
}

func TestIngestByClientCertificate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	ca := newTestCA(t)
	key, cert := ca.issue(&x509.Certificate{Subject: pkix.Name{CommonName: "collector"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	server := ca.write("server.crt", cert, key)
	acme, intruder := ca.client("billing.acme.internal"), ca.client("intruder.example")
	c := startIngestCollector(t, "ingest-mtls-e2e.yaml", intruder,
		"E2E_SERVER_CERT="+server, "E2E_SERVER_KEY="+server+".key", "E2E_CLIENT_CA="+filepath.Join(ca.dir, "ca.crt"))

	// A certificate of a listed name is the sender's identity.
	c.clientTLS = acme
	if code, err := c.postHTTP("", callTraces("mtls-http", "")); err != nil || code != http.StatusOK {
		t.Errorf("OTLP/HTTP with acme's certificate: %d %v", code, err)
	}
	if code, err := c.sendGRPC("", callTraces("mtls-grpc", "acme")); code != codes.OK {
		t.Errorf("OTLP/gRPC with acme's certificate: %v", err)
	}
	// It cannot claim another tenant.
	if code, _ := c.postHTTP("", callTraces("mtls-spoof-http", "globex")); code != http.StatusForbidden {
		t.Errorf("OTLP/HTTP, acme's certificate claiming globex: %d, want 403", code)
	}
	if code, _ := c.sendGRPC("", callTraces("mtls-spoof-grpc", "globex")); code != codes.PermissionDenied {
		t.Errorf("OTLP/gRPC, acme's certificate claiming globex: %s, want PermissionDenied", code)
	}
	// A certificate from the CA with a name nobody listed is refused.
	c.clientTLS = intruder
	if code, _ := c.postHTTP("", callTraces("intruder-http", "")); code != http.StatusUnauthorized {
		t.Errorf("OTLP/HTTP with an unlisted certificate: %d, want 401", code)
	}
	if code, _ := c.sendGRPC("", callTraces("intruder-grpc", "")); code != codes.Unauthenticated {
		t.Errorf("OTLP/gRPC with an unlisted certificate: %s, want Unauthenticated", code)
	}
	// A relay's certificate: the tenant is the one the relay stamped, on
	// both protocols; data without one is refused. A certificate that
	// carries a relay's and a tenant's names is neither.
	c.clientTLS = ca.client("relay.docket.internal")
	if code, err := c.postHTTP("", callTraces("relay-http", "globex")); err != nil || code != http.StatusOK {
		t.Errorf("OTLP/HTTP, relay stamping globex: %d %v", code, err)
	}
	if code, err := c.sendGRPC("", callTraces("relay-grpc", "acme")); code != codes.OK {
		t.Errorf("OTLP/gRPC, relay stamping acme: %v", err)
	}
	if code, _ := c.postHTTP("", callTraces("relay-none-http", "")); code != http.StatusForbidden {
		t.Errorf("OTLP/HTTP, relay without a tenant: %d, want 403", code)
	}
	if code, _ := c.sendGRPC("", callTraces("relay-none-grpc", "")); code != codes.PermissionDenied {
		t.Errorf("OTLP/gRPC, relay without a tenant: %s, want PermissionDenied", code)
	}
	c.clientTLS = ca.client("relay.docket.internal", "billing.acme.internal")
	if code, _ := c.postHTTP("", callTraces("relay-acme-http", "globex")); code != http.StatusUnauthorized {
		t.Errorf("OTLP/HTTP, a certificate of a relay and a tenant: %d, want 401", code)
	}
	if code, _ := c.sendGRPC("", callTraces("relay-acme-grpc", "globex")); code != codes.Unauthenticated {
		t.Errorf("OTLP/gRPC, a certificate of a relay and a tenant: %s, want Unauthenticated", code)
	}
	c.clientTLS = intruder
	// A token still names its tenant when the sender has a certificate.
	if code, err := c.postHTTP(globexToken, callTraces("token-http", "")); err != nil || code != http.StatusOK {
		t.Errorf("OTLP/HTTP with globex's token: %d %v", code, err)
	}
	// Without a client certificate the handshake itself fails.
	c.clientTLS = ca.client()
	if code, err := c.postHTTP(acmeToken, callTraces("nocert-http", "")); err == nil {
		t.Errorf("OTLP/HTTP without a client certificate answered %d", code)
	}
	if code, _ := c.sendGRPC(acmeToken, callTraces("nocert-grpc", "")); code == codes.OK {
		t.Error("OTLP/gRPC without a client certificate was accepted")
	}

	want := map[string]string{"mtls-http": "acme", "mtls-grpc": "acme", "token-http": "globex", "relay-http": "globex", "relay-grpc": "acme"}
	if got := c.waitStored(t, len(want)); !maps.Equal(got, want) {
		t.Errorf("ledger holds %v, want %v", got, want)
	}
	wantCounts := map[string]int{"authenticated/acme": 2, "authenticated/globex": 1, "refused/acme": 2,
		"relayed/globex": 1, "relayed/acme": 1, "unauthenticated/" + conventions.UnknownTenant: 2}
	if counts := c.tenantCounts(t); !maps.Equal(counts, wantCounts) {
		t.Errorf("otelcol_processor_tenant_records: %v, want %v", counts, wantCounts)
	}
}
