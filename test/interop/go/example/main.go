// A small docflow-api client in Go: GetSubscriptions over gRPC (h2c),
// GetCounteragentsFromGroup over the legacy HTTP path (binary protobuf, as
// the existing SDKs call it), and the google.rpc.ErrorInfo of a failed call.
//
// Generate the client code first (docs/clients.md, "Go"),
// start the service (npm start), then:
//
//	go run ./example -url http://127.0.0.1:8080
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	apiv1 "github.com/docflow/docflow-api/gen/go/docflow/api/v1"
	"github.com/docflow/docflow-api/gen/go/docflow/legacy"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The demo data of `npm start` (docs/configuration.md, "Demo data and credentials").
const (
	apiKey     = "demo-api-key"
	adminToken = "demo-admin-token"
	box        = "11111111-1111-4111-8111-111111111111"
	expiredBox = "33333333-3333-4333-8333-333333333333"
	admin      = "aaaaaaaa-0000-4000-8000-000000000001"
	clerk      = "aaaaaaaa-0000-4000-8000-000000000002"
	partners   = "99999999-0000-4000-8000-000000000001"
)

func authorization(token string) string {
	return "ServiceAuth svcauth_api_client_id=" + apiKey + ", svcauth_token=" + token
}

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "base URL of docflow-api")
	flag.Parse()
	if err := run(*base, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(base string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// gRPC over cleartext HTTP/2 (h2c) to host:port; the header travels as
	// the metadata "authorization".
	target := strings.TrimPrefix(base, "http://")
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	subscriptions := apiv1.NewSubscriptionServiceClient(conn)
	callCtx := metadata.AppendToOutgoingContext(ctx, "authorization", authorization(adminToken))

	got, err := subscriptions.GetSubscriptions(callCtx, &apiv1.GetSubscriptionsRequest{BoxId: box, UserId: clerk})
	if err != nil {
		return fmt.Errorf("GetSubscriptions: %w", err)
	}
	fmt.Fprintf(out, "gRPC GetSubscriptions: %d subscriptions\n", len(got.GetSubscriptions()))
	for _, s := range got.GetSubscriptions() {
		fmt.Fprintf(out, "  %s subscribed=%t\n", s.GetId(), s.GetIsSubscribed())
	}

	// The legacy path: GET with query parameters, no Accept header, binary
	// protobuf back. proto.Unmarshal fails if a required field is missing.
	query := url.Values{"boxId": {box}, "counteragentGroupId": {partners}, "count": {"4"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/GetCounteragentsFromGroup?"+query.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", authorization(adminToken))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GetCounteragentsFromGroup: %d %s: %s", res.StatusCode, res.Header.Get("X-Service-ErrorCode"), body)
	}
	var page legacy.CounteragentFromGroupResponse
	if err := proto.Unmarshal(body, &page); err != nil {
		return fmt.Errorf("GetCounteragentsFromGroup: %w", err)
	}
	fmt.Fprintf(out, "legacy GetCounteragentsFromGroup: %d of %d, next afterIndexKey %q\n",
		len(page.GetCounteragentBoxId()), page.GetTotalCount(), page.GetAfterIndexKey())

	// A failed call: the box's API subscription has ended. The status
	// carries a google.rpc.ErrorInfo (package errdetails of genproto).
	_, err = subscriptions.GetSubscriptions(callCtx, &apiv1.GetSubscriptionsRequest{BoxId: expiredBox, UserId: admin})
	if err == nil {
		return errors.New("GetSubscriptions on the expired box: no error")
	}
	st := status.Convert(err)
	fmt.Fprintf(out, "gRPC error: %s: %s\n", st.Code(), st.Message())
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			fmt.Fprintf(out, "  ErrorInfo reason=%s domain=%s errorCode=%s\n",
				info.GetReason(), info.GetDomain(), info.GetMetadata()["errorCode"])
		}
	}
	return nil
}
