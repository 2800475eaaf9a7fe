// Interop tests: a grpc-go client generated from proto/ with the recipe
// proto/buf.gen.go.yaml (protoc-gen-go + protoc-gen-go-grpc) against a real
// docflow-api on a free port, over gRPC (h2c) and the legacy HTTP paths.
//
// Run with `npm run test:interop:go` (generates ./docflowpb, then go test).
// With DOCFLOW_URL set, the tests use that server (with the demo data of
// `npm start`) instead of starting one.
//
// Adding an RPC: add an entry to rpcCases (key: "<package>.<Service>/<Method>")
// and, when it has a google.api.http rule, one to legacyCases (key:
// "<VERB> <path>"). TestEveryRPCHasACase fails, naming the key, until both
// exist.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "github.com/docflow/docflow-api/gen/go/docflow/api/v1"
	"github.com/docflow/docflow-api/gen/go/docflow/legacy"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The demo data the service loads when it starts with the embedded database.
const (
	apiKey          = "demo-api-key"
	box             = "11111111-1111-4111-8111-111111111111"
	expiredBox      = "33333333-3333-4333-8333-333333333333"
	adminID         = "aaaaaaaa-0000-4000-8000-000000000001"
	clerkID         = "aaaaaaaa-0000-4000-8000-000000000002"
	adminToken      = "demo-admin-token"
	clerkToken      = "demo-clerk-token"
	deletedMessage  = "eeeeeeee-0000-4000-8000-000000000001"
	deletedTemplate = "eeeeeeee-0000-4000-8000-000000000002"
	liveMessage     = "eeeeeeee-0000-4000-8000-000000000003"
	liveSalesDoc    = "ffffffff-0000-4000-8000-000000000031"
	liveAccountsDoc = "ffffffff-0000-4000-8000-000000000032"
	partners        = "99999999-0000-4000-8000-000000000001"
	emptyGroup      = "99999999-0000-4000-8000-000000000002"
	defaultGroup    = "00000000-0000-0000-0000-000000000000"
	sales           = "dddddddd-0000-4000-8000-000000000001"
	// IsMyCounteragent in the default group; the group cases move it and put it back.
	mover = "cccccccc-0000-4000-8000-000000000011"
	// IsInvitedByMe: cannot be moved into a group.
	invited = "cccccccc-0000-4000-8000-000000000012"
)

// createGroup makes a group with a name unique to the test and returns its id.
func createGroup(t *testing.T, s *session, name string) string {
	c := apiv1.NewCounteragentServiceClient(s.conn)
	group, err := c.CreateCounteragentGroup(s.as(adminToken), &apiv1.CreateCounteragentGroupRequest{
		BoxId: box,
		Group: &legacy.CounteragentGroupToCreate{Name: proto.String(name)},
	})
	must(t, err)
	if group.CounteragentGroupId == nil || group.GetName() != name {
		t.Fatalf("created group: %v", group)
	}
	return group.GetCounteragentGroupId()
}

// ------------------------------------------------------------------ the cases

// rpcCases: one entry per RPC of the docflow.api.v1 services, called with the
// generated grpc-go client, success and errors.
var rpcCases = map[string]func(t *testing.T, s *session){
	"docflow.api.v1.SubscriptionService/GetSubscriptions": func(t *testing.T, s *session) {
		c := apiv1.NewSubscriptionServiceClient(s.conn)
		res, err := c.GetSubscriptions(s.as(adminToken), &apiv1.GetSubscriptionsRequest{BoxId: box, UserId: clerkID})
		must(t, err)
		if n := len(res.GetSubscriptions()); n != 10 {
			t.Fatalf("got %d subscriptions, want 10", n)
		}
		for _, sub := range res.GetSubscriptions() {
			if sub.IsSubscribed == nil { // proto2: required fields are always on the wire
				t.Fatalf("%s: IsSubscribed absent", sub.GetId())
			}
		}
		_, err = c.GetSubscriptions(s.as(adminToken), &apiv1.GetSubscriptionsRequest{BoxId: expiredBox, UserId: adminID})
		wantError(t, err, codes.FailedPrecondition, "API_SUBSCRIPTION_ENDED", "Http.PaymentRequired")
		_, err = c.GetSubscriptions(s.as(adminToken), &apiv1.GetSubscriptionsRequest{BoxId: box, UserId: "no-such-user"})
		wantError(t, err, codes.NotFound, "NOT_FOUND", "Employee.NotFound")
		_, err = c.GetSubscriptions(s.ctx, &apiv1.GetSubscriptionsRequest{BoxId: box, UserId: clerkID})
		wantError(t, err, codes.Unauthenticated, "UNAUTHENTICATED", "Http.Unauthorized")
	},
	"docflow.api.v1.SubscriptionService/UpdateSubscriptions": func(t *testing.T, s *session) {
		c := apiv1.NewSubscriptionServiceClient(s.conn)
		res, err := c.UpdateSubscriptions(s.as(clerkToken), &apiv1.UpdateSubscriptionsRequest{
			BoxId: box, UserId: clerkID,
			Subscriptions: &legacy.SubscriptionsToUpdate{Subscriptions: []*legacy.Subscription{
				{Id: proto.String("ResolutionRequests"), IsSubscribed: proto.Bool(false)},
			}},
		})
		must(t, err)
		if subscribed(res)["ResolutionRequests"] {
			t.Fatal("ResolutionRequests is still subscribed")
		}
		_, err = c.UpdateSubscriptions(s.as(clerkToken), &apiv1.UpdateSubscriptionsRequest{
			BoxId: box, UserId: clerkID,
			Subscriptions: &legacy.SubscriptionsToUpdate{Subscriptions: []*legacy.Subscription{
				{Id: proto.String("NoSuchKind"), IsSubscribed: proto.Bool(true)},
			}},
		})
		wantError(t, err, codes.InvalidArgument, "INVALID_ARGUMENT", "Subscriptions.UnknownId")
	},
	"docflow.api.v1.DocumentService/Restore": func(t *testing.T, s *session) {
		c := apiv1.NewDocumentServiceClient(s.conn)
		req := &apiv1.RestoreRequest{BoxId: box, MessageId: deletedMessage}
		_, err := c.Restore(s.as(adminToken), req)
		must(t, err)
		_, err = c.Restore(s.as(adminToken), req)
		wantError(t, err, codes.AlreadyExists, "ALREADY_EXISTS", "Restore.AlreadyRestored")
		_, err = c.Restore(s.as(adminToken), &apiv1.RestoreRequest{BoxId: box, MessageId: "no-such-message"})
		wantError(t, err, codes.NotFound, "NOT_FOUND", "Message.NotFound")
		// Back to the demo state.
		_, err = c.Delete(s.as(adminToken), &apiv1.DeleteRequest{BoxId: box, MessageId: deletedMessage})
		must(t, err)
	},
	"docflow.api.v1.DocumentService/Delete": func(t *testing.T, s *session) {
		c := apiv1.NewDocumentServiceClient(s.conn)
		req := &apiv1.DeleteRequest{BoxId: box, MessageId: liveMessage, DocumentId: proto.String(liveSalesDoc)}
		_, err := c.Delete(s.as(clerkToken), req)
		must(t, err)
		_, err = c.Delete(s.as(clerkToken), req)
		wantError(t, err, codes.AlreadyExists, "ALREADY_EXISTS", "Delete.AlreadyDeleted")
		_, err = c.Delete(s.as(clerkToken), &apiv1.DeleteRequest{BoxId: box, MessageId: liveMessage, DocumentId: proto.String(liveAccountsDoc)})
		wantError(t, err, codes.PermissionDenied, "PERMISSION_DENIED", "Document.AccessDenied")
		_, err = c.Restore(s.as(clerkToken), &apiv1.RestoreRequest{BoxId: box, MessageId: liveMessage, DocumentId: proto.String(liveSalesDoc)})
		must(t, err)
	},
	"docflow.api.v1.CounteragentService/GetCounteragentsFromGroup": func(t *testing.T, s *session) {
		c := apiv1.NewCounteragentServiceClient(s.conn)
		var all []string
		var after *string
		for range 10 {
			page, err := c.GetCounteragentsFromGroup(s.as(adminToken), &apiv1.GetCounteragentsFromGroupRequest{
				BoxId: box, CounteragentGroupId: partners, Count: proto.Int32(4), AfterIndexKey: after,
			})
			must(t, err)
			if page.TotalCount == nil || page.GetTotalCount() != 6 {
				t.Fatalf("TotalCount %v, want 6", page.TotalCount)
			}
			if len(page.GetCounteragentBoxId()) == 0 {
				if page.AfterIndexKey != nil {
					t.Fatal("an empty page carries an AfterIndexKey")
				}
				break
			}
			all = append(all, page.GetCounteragentBoxId()...)
			after = page.AfterIndexKey
		}
		if len(all) != 6 {
			t.Fatalf("got %d counteragents over all pages, want 6", len(all))
		}
		empty, err := c.GetCounteragentsFromGroup(s.as(adminToken), &apiv1.GetCounteragentsFromGroupRequest{BoxId: box, CounteragentGroupId: emptyGroup})
		must(t, err)
		if empty.TotalCount == nil || empty.GetTotalCount() != 0 {
			t.Fatalf("empty group: TotalCount %v, want 0 on the wire", empty.TotalCount)
		}
		_, err = c.GetCounteragentsFromGroup(s.as(adminToken), &apiv1.GetCounteragentsFromGroupRequest{BoxId: box, CounteragentGroupId: "no-such-group"})
		wantError(t, err, codes.NotFound, "NOT_FOUND", "CounteragentGroup.NotFound")
		_, err = c.GetCounteragentsFromGroup(s.as(clerkToken), &apiv1.GetCounteragentsFromGroupRequest{BoxId: box, CounteragentGroupId: partners})
		wantError(t, err, codes.PermissionDenied, "PERMISSION_DENIED", "Http.Forbidden")
	},
}

func init() {
	groupCases := map[string]func(t *testing.T, s *session){
		"docflow.api.v1.CounteragentService/CreateCounteragentGroup": func(t *testing.T, s *session) {
			c := apiv1.NewCounteragentServiceClient(s.conn)
			group, err := c.CreateCounteragentGroup(s.as(adminToken), &apiv1.CreateCounteragentGroupRequest{
				BoxId: box,
				Group: &legacy.CounteragentGroupToCreate{
					Name:        proto.String("Go: Sales partners"),
					Departments: &legacy.DepartmentsInGroup{DepartmentIds: []string{sales}},
				},
			})
			must(t, err)
			if got := group.GetDepartments().GetDepartmentIds(); len(got) != 1 || got[0] != sales {
				t.Fatalf("departments %v", got)
			}
			_, err = c.CreateCounteragentGroup(s.as(adminToken), &apiv1.CreateCounteragentGroupRequest{
				BoxId: box, Group: &legacy.CounteragentGroupToCreate{Name: proto.String("go: SALES PARTNERS")},
			})
			wantError(t, err, codes.AlreadyExists, "ALREADY_EXISTS", "CounteragentGroup.DuplicateName")
			_, err = c.CreateCounteragentGroup(s.as(clerkToken), &apiv1.CreateCounteragentGroupRequest{
				BoxId: box, Group: &legacy.CounteragentGroupToCreate{Name: proto.String("Go: clerk")},
			})
			wantError(t, err, codes.PermissionDenied, "PERMISSION_DENIED", "Http.Forbidden")
		},
		"docflow.api.v1.CounteragentService/UpdateCounteragentGroup": func(t *testing.T, s *session) {
			c := apiv1.NewCounteragentServiceClient(s.conn)
			id := createGroup(t, s, "Go: to rename")
			group, err := c.UpdateCounteragentGroup(s.as(adminToken), &apiv1.UpdateCounteragentGroupRequest{
				BoxId: box, CounteragentGroupId: id,
				Changes: &legacy.CounteragentGroupToUpdate{Name: proto.String("Go: renamed")},
			})
			must(t, err)
			if group.GetName() != "Go: renamed" || group.Departments != nil {
				t.Fatalf("updated group: %v", group)
			}
			_, err = c.UpdateCounteragentGroup(s.as(adminToken), &apiv1.UpdateCounteragentGroupRequest{
				BoxId: box, CounteragentGroupId: defaultGroup,
				Changes: &legacy.CounteragentGroupToUpdate{Name: proto.String("Go: not allowed")},
			})
			wantError(t, err, codes.InvalidArgument, "INVALID_ARGUMENT", "CounteragentGroup.DefaultGroup")
		},
		"docflow.api.v1.CounteragentService/DeleteCounteragentGroup": func(t *testing.T, s *session) {
			c := apiv1.NewCounteragentServiceClient(s.conn)
			id := createGroup(t, s, "Go: to delete")
			_, err := c.DeleteCounteragentGroup(s.as(adminToken), &apiv1.DeleteCounteragentGroupRequest{BoxId: box, CounteragentGroupId: id})
			must(t, err)
			_, err = c.GetCounteragentGroup(s.as(adminToken), &apiv1.GetCounteragentGroupRequest{BoxId: box, CounteragentGroupId: id})
			wantError(t, err, codes.NotFound, "NOT_FOUND", "CounteragentGroup.NotFound")
		},
		"docflow.api.v1.CounteragentService/GetCounteragentGroup": func(t *testing.T, s *session) {
			c := apiv1.NewCounteragentServiceClient(s.conn)
			group, err := c.GetCounteragentGroup(s.as(adminToken), &apiv1.GetCounteragentGroupRequest{BoxId: box, CounteragentGroupId: partners})
			must(t, err)
			if group.GetName() != "Partners" {
				t.Fatalf("group %v", group)
			}
			def, err := c.GetCounteragentGroup(s.as(adminToken), &apiv1.GetCounteragentGroupRequest{BoxId: box, CounteragentGroupId: defaultGroup})
			must(t, err)
			if def.GetName() != "Default" || def.Departments != nil {
				t.Fatalf("default group %v", def)
			}
		},
		"docflow.api.v1.CounteragentService/GetCounteragentGroups": func(t *testing.T, s *session) {
			c := apiv1.NewCounteragentServiceClient(s.conn)
			list, err := c.GetCounteragentGroups(s.as(adminToken), &apiv1.GetCounteragentGroupsRequest{BoxId: box})
			must(t, err)
			if list.TotalCount == nil || int(list.GetTotalCount()) != len(list.GetGroups()) || len(list.GetGroups()) < 2 {
				t.Fatalf("groups %v", list)
			}
			past, err := c.GetCounteragentGroups(s.as(adminToken), &apiv1.GetCounteragentGroupsRequest{BoxId: box, Page: proto.Int32(1000)})
			must(t, err)
			if len(past.GetGroups()) != 0 || past.TotalCount == nil || past.GetTotalCount() != list.GetTotalCount() {
				t.Fatalf("a page past the end: %v", past)
			}
		},
		"docflow.api.v1.CounteragentService/AddCounteragentToGroup": func(t *testing.T, s *session) {
			c := apiv1.NewCounteragentServiceClient(s.conn)
			id := createGroup(t, s, "Go: movers")
			_, err := c.AddCounteragentToGroup(s.as(adminToken), &apiv1.AddCounteragentToGroupRequest{BoxId: box, CounteragentBoxId: mover, CounteragentGroupId: id})
			must(t, err)
			page, err := c.GetCounteragentsFromGroup(s.as(adminToken), &apiv1.GetCounteragentsFromGroupRequest{BoxId: box, CounteragentGroupId: id})
			must(t, err)
			if got := page.GetCounteragentBoxId(); len(got) != 1 || got[0] != mover || page.GetTotalCount() != 1 {
				t.Fatalf("members %v", page)
			}
			_, err = c.AddCounteragentToGroup(s.as(adminToken), &apiv1.AddCounteragentToGroupRequest{BoxId: box, CounteragentBoxId: invited, CounteragentGroupId: id})
			wantError(t, err, codes.AlreadyExists, "ALREADY_EXISTS", "Counteragent.NotMyCounteragent")
			_, err = c.AddCounteragentToGroup(s.as(adminToken), &apiv1.AddCounteragentToGroupRequest{BoxId: box, CounteragentBoxId: "no-such-box", CounteragentGroupId: id})
			wantError(t, err, codes.NotFound, "NOT_FOUND", "Counteragent.NotFound")
			_, err = c.AddCounteragentToGroup(s.as(adminToken), &apiv1.AddCounteragentToGroupRequest{BoxId: box, CounteragentBoxId: mover, CounteragentGroupId: defaultGroup})
			must(t, err)
		},
	}
	for name, run := range groupCases {
		rpcCases[name] = run
	}
	legacyGroupCases := map[string]func(t *testing.T, s *session){
		"POST /CreateCounteragentGroup": func(t *testing.T, s *session) {
			var group legacy.CounteragentGroup
			body := &legacy.CounteragentGroupToCreate{Name: proto.String("Go legacy: created")}
			s.legacy(t, "POST", "/CreateCounteragentGroup", url.Values{"boxId": {box}}, adminToken, body, 200, "", &group)
			if group.CounteragentGroupId == nil || group.Departments != nil {
				t.Fatalf("created %v", &group)
			}
			s.legacy(t, "POST", "/CreateCounteragentGroup", url.Values{"boxId": {box}}, adminToken, body, 409, "CounteragentGroup.DuplicateName", nil)
		},
		"POST /UpdateCounteragentGroup": func(t *testing.T, s *session) {
			id := createGroup(t, s, "Go legacy: to rename")
			var group legacy.CounteragentGroup
			body := &legacy.CounteragentGroupToUpdate{Name: proto.String("Go legacy: renamed")}
			s.legacy(t, "POST", "/UpdateCounteragentGroup", url.Values{"boxId": {box}, "counteragentGroupId": {id}}, adminToken, body, 200, "", &group)
			if group.GetName() != "Go legacy: renamed" {
				t.Fatalf("updated %v", &group)
			}
		},
		"POST /DeleteCounteragentGroup": func(t *testing.T, s *session) {
			id := createGroup(t, s, "Go legacy: to delete")
			q := url.Values{"boxId": {box}, "counteragentGroupId": {id}}
			s.legacy(t, "POST", "/DeleteCounteragentGroup", q, adminToken, nil, 200, "", nil)
			s.legacy(t, "GET", "/GetCounteragentGroup", q, adminToken, nil, 404, "CounteragentGroup.NotFound", nil)
		},
		"GET /GetCounteragentGroup": func(t *testing.T, s *session) {
			var group legacy.CounteragentGroup
			s.legacy(t, "GET", "/GetCounteragentGroup", url.Values{"boxId": {box}, "counteragentGroupId": {partners}}, adminToken, nil, 200, "", &group)
			if group.GetName() != "Partners" {
				t.Fatalf("group %v", &group)
			}
		},
		"GET /GetCounteragentGroups": func(t *testing.T, s *session) {
			var list legacy.CounteragentGroupsList
			s.legacy(t, "GET", "/GetCounteragentGroups", url.Values{"boxId": {box}, "page": {"1000"}}, adminToken, nil, 200, "", &list)
			if len(list.GetGroups()) != 0 || list.TotalCount == nil || list.GetTotalCount() < 2 {
				t.Fatalf("a page past the end: %v", &list)
			}
		},
		"POST /AddCounteragentToGroup": func(t *testing.T, s *session) {
			id := createGroup(t, s, "Go legacy: movers")
			q := url.Values{"boxId": {box}, "counteragentBoxId": {mover}, "counteragentGroupId": {id}}
			s.legacy(t, "POST", "/AddCounteragentToGroup", q, adminToken, nil, 200, "", nil)
			q.Set("counteragentBoxId", invited)
			s.legacy(t, "POST", "/AddCounteragentToGroup", q, adminToken, nil, 409, "Counteragent.NotMyCounteragent", nil)
			q.Set("counteragentBoxId", mover)
			q.Set("counteragentGroupId", defaultGroup)
			s.legacy(t, "POST", "/AddCounteragentToGroup", q, adminToken, nil, 200, "", nil)
		},
	}
	for name, run := range legacyGroupCases {
		legacyCases[name] = run
	}
}

// legacyCases: one entry per google.api.http rule, called as the existing
// SDKs do: binary protobuf, no Accept and no Content-Type.
var legacyCases = map[string]func(t *testing.T, s *session){
	"GET /GetSubscriptions": func(t *testing.T, s *session) {
		var res legacy.EmployeeSubscriptions
		s.legacy(t, "GET", "/GetSubscriptions", url.Values{"boxId": {box}, "userId": {clerkID}}, adminToken, nil, 200, "", &res)
		if n := len(res.GetSubscriptions()); n != 10 {
			t.Fatalf("got %d subscriptions, want 10", n)
		}
		s.legacy(t, "GET", "/GetSubscriptions", url.Values{"boxId": {box}, "userId": {clerkID}}, "", nil, 401, "Http.Unauthorized", nil)
		s.legacy(t, "GET", "/GetSubscriptions", url.Values{"boxId": {expiredBox}, "userId": {adminID}}, adminToken, nil, 402, "Http.PaymentRequired", nil)
		s.legacy(t, "GET", "/GetSubscriptions", url.Values{"boxId": {box}}, adminToken, nil, 400, "Http.BadRequest", nil)
	},
	"POST /UpdateSubscriptions": func(t *testing.T, s *session) {
		q := url.Values{"boxId": {box}, "userId": {clerkID}}
		var res legacy.EmployeeSubscriptions
		body := &legacy.SubscriptionsToUpdate{Subscriptions: []*legacy.Subscription{
			{Id: proto.String("EmployeeRequests"), IsSubscribed: proto.Bool(false)},
		}}
		s.legacy(t, "POST", "/UpdateSubscriptions", q, clerkToken, body, 200, "", &res)
		if subscribed(&res)["EmployeeRequests"] {
			t.Fatal("EmployeeRequests is still subscribed")
		}
		body.Subscriptions = append(body.Subscriptions, body.Subscriptions[0])
		s.legacy(t, "POST", "/UpdateSubscriptions", q, clerkToken, body, 400, "Subscriptions.DuplicateId", nil)
	},
	"POST /Restore": func(t *testing.T, s *session) {
		q := url.Values{"boxId": {box}, "messageId": {deletedTemplate}}
		s.legacy(t, "POST", "/Restore", q, adminToken, nil, 200, "", nil)
		s.legacy(t, "POST", "/Restore", q, adminToken, nil, 409, "Restore.AlreadyRestored", nil)
		s.legacy(t, "GET", "/Restore", q, adminToken, nil, 405, "Http.MethodNotAllowed", nil)
		s.legacy(t, "POST", "/Delete", q, adminToken, nil, 200, "", nil)
	},
	"POST /Delete": func(t *testing.T, s *session) {
		q := url.Values{"boxId": {box}, "messageId": {liveMessage}, "documentId": {liveAccountsDoc}}
		s.legacy(t, "POST", "/Delete", q, adminToken, nil, 200, "", nil)
		s.legacy(t, "POST", "/Delete", q, adminToken, nil, 409, "Delete.AlreadyDeleted", nil)
		s.legacy(t, "POST", "/Delete", q, clerkToken, nil, 403, "Document.AccessDenied", nil)
		s.legacy(t, "POST", "/Restore", q, adminToken, nil, 200, "", nil)
	},
	"GET /GetCounteragentsFromGroup": func(t *testing.T, s *session) {
		q := url.Values{"boxId": {box}, "counteragentGroupId": {partners}, "count": {"4"}}
		var first, second legacy.CounteragentFromGroupResponse
		s.legacy(t, "GET", "/GetCounteragentsFromGroup", q, adminToken, nil, 200, "", &first)
		if len(first.GetCounteragentBoxId()) != 4 || first.GetTotalCount() != 6 || first.AfterIndexKey == nil {
			t.Fatalf("first page: %v", &first)
		}
		q.Set("afterIndexKey", first.GetAfterIndexKey())
		s.legacy(t, "GET", "/GetCounteragentsFromGroup", q, adminToken, nil, 200, "", &second)
		if len(second.GetCounteragentBoxId()) != 2 || second.GetTotalCount() != 6 {
			t.Fatalf("second page: %v", &second)
		}
		q.Set("counteragentGroupId", "no-such-group")
		q.Del("afterIndexKey")
		s.legacy(t, "GET", "/GetCounteragentsFromGroup", q, adminToken, nil, 404, "CounteragentGroup.NotFound", nil)
	},
}

func TestRPCs(t *testing.T) {
	s := newSession(t)
	for _, name := range sortedKeys(rpcCases) {
		t.Run(name, func(t *testing.T) { rpcCases[name](t, s) })
	}
}

func TestLegacyPaths(t *testing.T) {
	s := newSession(t)
	for _, name := range sortedKeys(legacyCases) {
		t.Run(name, func(t *testing.T) { legacyCases[name](t, s) })
	}
}

// Every RPC of the generated docflow.api.v1 code has a case, and so has
// every legacy path declared by a google.api.http rule.
func TestEveryRPCHasACase(t *testing.T) {
	methods := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("docflow.api.v1", func(file protoreflect.FileDescriptor) bool {
		for i := range file.Services().Len() {
			service := file.Services().Get(i)
			for j := range service.Methods().Len() {
				method := service.Methods().Get(j)
				methods++
				name := fmt.Sprintf("%s/%s", service.FullName(), method.Name())
				if _, ok := rpcCases[name]; !ok {
					t.Errorf("no case for the RPC %s: add one to rpcCases", name)
				}
				rule, _ := proto.GetExtension(method.Options(), annotations.E_Http).(*annotations.HttpRule)
				if rule == nil {
					continue
				}
				path := legacyKey(rule)
				if _, ok := legacyCases[path]; !ok {
					t.Errorf("no case for the legacy path %q of %s: add one to legacyCases", path, name)
				}
			}
		}
		return true
	})
	if methods == 0 {
		t.Fatal("no RPC found in the generated code")
	}
}

// grpc.health.v1 through grpc-go's own package: our copy of health.proto is
// never generated for clients.
func TestHealthWithUpstreamTypes(t *testing.T) {
	s := newSession(t)
	c := healthpb.NewHealthClient(s.conn)
	for _, service := range []string{"", "docflow.api.v1.SubscriptionService"} {
		res, err := c.Check(s.ctx, &healthpb.HealthCheckRequest{Service: service})
		must(t, err)
		if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("%q: %v", service, res.GetStatus())
		}
	}
	list, err := c.List(s.ctx, &healthpb.HealthListRequest{})
	must(t, err)
	if got := list.GetStatuses()["docflow.api.v1.SubscriptionService"].GetStatus(); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("List: %v", list.GetStatuses())
	}
}

// Proto2 required fields are checked by the Go runtime before a request
// leaves: the call fails on the client with codes.Internal.
func TestRequiredFieldsAreCheckedBeforeSending(t *testing.T) {
	s := newSession(t)
	c := apiv1.NewSubscriptionServiceClient(s.conn)
	incomplete := &legacy.SubscriptionsToUpdate{Subscriptions: []*legacy.Subscription{{Id: proto.String("News")}}}
	_, err := c.UpdateSubscriptions(s.as(clerkToken), &apiv1.UpdateSubscriptionsRequest{BoxId: box, UserId: clerkID, Subscriptions: incomplete})
	want := "required field docflow.legacy.Subscription.IsSubscribed not set"
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want codes.Internal with %q", err, want)
	}
	if _, err := proto.Marshal(incomplete); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("proto.Marshal: %v", err)
	}
	// Sent anyway (AllowPartial), the service answers 400 on the legacy path.
	body, err := proto.MarshalOptions{AllowPartial: true}.Marshal(incomplete)
	must(t, err)
	s.legacyRaw(t, "POST", "/UpdateSubscriptions", url.Values{"boxId": {box}, "userId": {clerkID}}, clerkToken, body, 400, "Http.BadRequest", nil)
}

// The example client (example/main.go, shown in docs/clients.md) runs as it is.
func TestExample(t *testing.T) {
	s := newSession(t)
	out, err := exec.Command("go", "run", "./example", "-url", s.base).CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./example: %v\n%s", err, out)
	}
	for _, want := range []string{
		"gRPC GetSubscriptions: 10 subscriptions",
		"legacy GetCounteragentsFromGroup: 4 of 6",
		"ErrorInfo reason=API_SUBSCRIPTION_ENDED domain=docflow-api errorCode=Http.PaymentRequired",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Fatalf("example output lacks %q:\n%s", want, out)
		}
	}
}

// ------------------------------------------------------------------ helpers

type session struct {
	base string
	conn *grpc.ClientConn
	ctx  context.Context
}

func newSession(t *testing.T) *session {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(baseURL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(func() { cancel(); conn.Close() })
	return &session{base: baseURL, conn: conn, ctx: ctx}
}

// as: the call context with the ServiceAuth header of a demo token.
func (s *session) as(token string) context.Context {
	return metadata.AppendToOutgoingContext(s.ctx, "authorization", authorization(token))
}

func authorization(token string) string {
	return "ServiceAuth svcauth_api_client_id=" + apiKey + ", svcauth_token=" + token
}

// wantError: the gRPC status code and the google.rpc.ErrorInfo detail.
func wantError(t *testing.T, err error, code codes.Code, reason, errorCode string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Fatalf("got %v, want %v", err, code)
	}
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			if info.GetReason() != reason || info.GetDomain() != "docflow-api" || info.GetMetadata()["errorCode"] != errorCode {
				t.Fatalf("ErrorInfo %v, want reason %s, errorCode %s", info, reason, errorCode)
			}
			return
		}
	}
	t.Fatalf("%v: no google.rpc.ErrorInfo among %v", err, st.Details())
}

// legacy calls a legacy path with a protobuf body (nil: none) and checks the
// status, the X-Service-ErrorCode of an error, and decodes a 200 into out.
func (s *session) legacy(t *testing.T, method, path string, q url.Values, token string, body proto.Message, wantStatus int, wantCode string, out proto.Message) {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		raw, err = proto.Marshal(body)
		must(t, err)
	}
	s.legacyRaw(t, method, path, q, token, raw, wantStatus, wantCode, out)
}

func (s *session) legacyRaw(t *testing.T, method, path string, q url.Values, token string, body []byte, wantStatus int, wantCode string, out proto.Message) {
	t.Helper()
	req, err := http.NewRequestWithContext(s.ctx, method, s.base+path+"?"+q.Encode(), bytes.NewReader(body))
	must(t, err)
	if token != "" {
		req.Header.Set("Authorization", authorization(token))
	}
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	must(t, err)
	if res.StatusCode != wantStatus {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, data, wantStatus)
	}
	if wantStatus != 200 {
		if got := res.Header.Get("X-Service-ErrorCode"); got != wantCode {
			t.Fatalf("%s %s: X-Service-ErrorCode %q, want %q", method, path, got, wantCode)
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || len(data) == 0 {
			t.Fatalf("%s %s: error body %q (%s)", method, path, data, res.Header.Get("Content-Type"))
		}
		return
	}
	if out == nil {
		if len(data) != 0 {
			t.Fatalf("%s %s: body %q, want none", method, path, data)
		}
		return
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	// proto.Unmarshal fails when a proto2 required field is missing.
	must(t, proto.Unmarshal(data, out))
}

// legacyKey: "<VERB> <path>" of a google.api.http rule.
func legacyKey(rule *annotations.HttpRule) string {
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "GET " + p.Get
	case *annotations.HttpRule_Post:
		return "POST " + p.Post
	case *annotations.HttpRule_Put:
		return "PUT " + p.Put
	case *annotations.HttpRule_Delete:
		return "DELETE " + p.Delete
	case *annotations.HttpRule_Patch:
		return "PATCH " + p.Patch
	case *annotations.HttpRule_Custom:
		return p.Custom.GetKind() + " " + p.Custom.GetPath()
	}
	return "?"
}

func subscribed(res *legacy.EmployeeSubscriptions) map[string]bool {
	m := map[string]bool{}
	for _, s := range res.GetSubscriptions() {
		m[s.GetId()] = s.GetIsSubscribed()
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ------------------------------------------------------------------ the server

var baseURL string

// TestMain starts the service as `npm start` does it, on a free port with the
// embedded database and the demo data, unless DOCFLOW_URL names one.
func TestMain(m *testing.M) {
	if baseURL = os.Getenv("DOCFLOW_URL"); baseURL != "" {
		os.Exit(m.Run())
	}
	root, _ := filepath.Abs("../../..")
	cmd := exec.Command("node", "--import", "tsx", "src/main.ts")
	cmd.Dir = root
	cmd.Env = append(withoutDatabase(os.Environ()), "HOST=127.0.0.1", "PORT=0", "LOG_LEVEL=warn")
	stderr, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	w.Close()
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	lines := bufio.NewScanner(stderr)
	var seen []string
	for baseURL == "" && lines.Scan() {
		seen = append(seen, lines.Text())
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			baseURL = m[1]
		}
	}
	if baseURL == "" {
		_ = cmd.Process.Kill()
		fmt.Fprintf(os.Stderr, "the service did not start:\n%s\n", strings.Join(seen, "\n"))
		os.Exit(1)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	code := m.Run()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "the service did not stop cleanly: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// withoutDatabase: the embedded database and the demo data, whatever the
// caller's environment says.
func withoutDatabase(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MONGODB_URI" || name == "MONGODB_DB" || name == "SEED_FILE"
	})
}
