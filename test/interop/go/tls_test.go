package interop

// TLS on the service's one port (docs/operations.md, "TLS"), with grpc-go and
// Go's net/http as the clients: a service of its own is started with
// TLS_CERT_FILE and TLS_KEY_FILE (a certificate made here, signed by a CA made
// here), then with TLS_CLIENT_CA_FILE for mutual TLS.

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	apiv1 "github.com/docflow/docflow-api/gen/go/docflow/api/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// testCA: a CA, and certificates it signs, written as PEM files into dir.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, dir string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "docflow go interop CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	must(t, err)
	cert, err := x509.ParseCertificate(der)
	must(t, err)
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue writes <name>.pem and <name>.key, for a server (127.0.0.1) or a client.
func (ca *testCA) issue(t *testing.T, dir, name string, serial int64, client bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	template := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	if client {
		template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		template.IPAddresses = nil
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	must(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	must(t, err)
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, name+".key"), "PRIVATE KEY", keyDER)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key"))
	must(t, err)
	return pair
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	must(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
}

// startTLSService starts the service with the given environment and returns
// its https base URL; it is stopped (SIGTERM, exit 0) when the test ends.
func startTLSService(t *testing.T, env ...string) string {
	t.Helper()
	root, _ := filepath.Abs("../../..")
	cmd := exec.Command("node", "--import", "tsx", "src/main.ts")
	cmd.Dir = root
	cmd.Env = append(append(withoutDatabase(os.Environ()), "HOST=127.0.0.1", "PORT=0", "LOG_LEVEL=warn", "SHUTDOWN_DRAIN_MS=0"), env...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	listening := regexp.MustCompile(`listening on (https://\S+)`)
	lines := bufio.NewScanner(stderr)
	base := ""
	for base == "" && lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("the service did not start with TLS")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("the service did not stop cleanly: %v", err)
		}
	})
	return base
}

// getSubscriptions: one authorized call on conn.
func getSubscriptions(conn *grpc.ClientConn) error {
	client := apiv1.NewSubscriptionServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization(adminToken))
	_, err := client.GetSubscriptions(ctx, &apiv1.GetSubscriptionsRequest{BoxId: box, UserId: clerkID})
	return err
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	ca.issue(t, dir, "server", 2, false)
	base := startTLSService(t,
		"TLS_CERT_FILE="+filepath.Join(dir, "server.pem"),
		"TLS_KEY_FILE="+filepath.Join(dir, "server.key"))
	host := base[len("https://"):]

	t.Run("grpc-go over TLS (h2 by ALPN)", func(t *testing.T) {
		conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.pool})))
		must(t, err)
		defer conn.Close()
		must(t, getSubscriptions(conn))
	})

	t.Run("grpc-go refuses the service's certificate without the CA", func(t *testing.T) {
		conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{})))
		must(t, err)
		defer conn.Close()
		if err := getSubscriptions(conn); status.Code(err) != codes.Unavailable {
			t.Fatalf("want Unavailable (certificate not trusted), got %v", err)
		}
	})

	t.Run("net/http: the legacy path over HTTP/2 and HTTP/1.1", func(t *testing.T) {
		for _, h2 := range []bool{true, false} {
			transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}, ForceAttemptHTTP2: h2}
			if !h2 {
				transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			}
			req, err := http.NewRequest("GET", base+"/GetSubscriptions?boxId="+box+"&userId="+clerkID, nil)
			must(t, err)
			req.Header.Set("Authorization", authorization(adminToken))
			res, err := (&http.Client{Transport: transport}).Do(req)
			must(t, err)
			res.Body.Close()
			wantProto := map[bool]int{true: 2, false: 1}[h2]
			if res.StatusCode != 200 || res.ProtoMajor != wantProto {
				t.Fatalf("HTTP/%d wanted: got %s %d", wantProto, res.Proto, res.StatusCode)
			}
		}
	})
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir)
	ca.issue(t, dir, "server", 2, false)
	client := ca.issue(t, dir, "client", 3, true)
	base := startTLSService(t,
		"TLS_CERT_FILE="+filepath.Join(dir, "server.pem"),
		"TLS_KEY_FILE="+filepath.Join(dir, "server.key"),
		"TLS_CLIENT_CA_FILE="+filepath.Join(dir, "ca.pem"))
	host := base[len("https://"):]

	without, err := grpc.NewClient(host, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.pool})))
	must(t, err)
	defer without.Close()
	if err := getSubscriptions(without); status.Code(err) != codes.Unavailable {
		t.Fatalf("without a client certificate: want Unavailable (refused at the handshake), got %v", err)
	}
	with, err := grpc.NewClient(host, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{client}})))
	must(t, err)
	defer with.Close()
	must(t, getSubscriptions(with))
}
