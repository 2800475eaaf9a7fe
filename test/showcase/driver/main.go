// compliance-driver runs Google's gapic-showcase Compliance suite (v0.35.0) against any HTTP
// server, using the Go REST client that Google generated for the Showcase API
// (github.com/googleapis/gapic-showcase/client, NewComplianceRESTClient).
//
// What it checks, and why (mirrors Google's own tests):
//
//   - suite cases: for every group in compliance_suite.json, for every request, for every RPC the
//     group lists, call the RPC with the generated REST client and require (1) no error and (2) the
//     echoed response.request to be proto.Equal to the request that was sent. This is the
//     comparison in gapic-showcase's cmd/gapic-showcase/compliance_suite_test.go
//     (TestComplianceSuite). gapic-generator-go's showcase/compliance_test.go compares only
//     response.request.info; the full comparison is stricter and passes against the reference
//     server.
//   - enum cases: GetEnum(unknown_enum=false|true), then VerifyEnum(<the GetEnum response>) must
//     succeed and return the same message (sdk-platform-java ITNumericEnums semantics).
//   - extra cases (--extras, default on): RepeatDataPathTrailingResource, which the suite JSON
//     never lists, with requests that fit its template.
//   - negative cases (--negative, default off): the server-strictness checks of
//     cmd/gapic-showcase/compliance_suite_errors_test.go (wrong requests must get a non-200
//     answer). These test the reference server's strictness, not the client; see REPORT.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	showcase "github.com/googleapis/gapic-showcase/client"
	pb "github.com/googleapis/gapic-showcase/server/genproto"
	"github.com/googleapis/gapic-showcase/server/services"
	gax "github.com/googleapis/gax-go/v2"
	"github.com/iancoleman/strcase"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

type repeatMethod func(ctx context.Context, req *pb.RepeatRequest, opts ...gax.CallOption) (*pb.RepeatResponse, error)

// Binding templates, copied from compliance.proto (google.api.http); used for binding_uri checks.
var bindingURIs = map[string]string{
	"Compliance.RepeatDataBody":                 "/v1beta1/repeat:body",
	"Compliance.RepeatDataBodyInfo":             "/v1beta1/repeat:bodyinfo",
	"Compliance.RepeatDataQuery":                "/v1beta1/repeat:query",
	"Compliance.RepeatDataSimplePath":           "/v1beta1/repeat/{info.f_string}/{info.f_int32}/{info.f_double}/{info.f_bool}/{info.f_kingdom}:simplepath",
	"Compliance.RepeatDataPathResource":         "/v1beta1/repeat/{info.f_string=first/*}/{info.f_child.f_string=second/*}/bool/{info.f_bool}:pathresource",
	"Compliance.RepeatDataPathResource#1":       "/v1beta1/repeat/{info.f_child.f_string=first/*}/{info.f_string=second/*}/bool/{info.f_bool}:childfirstpathresource",
	"Compliance.RepeatDataPathTrailingResource": "/v1beta1/repeat/{info.f_string=first/*}/{info.f_child.f_string=second/**}:pathtrailingresource",
	"Compliance.RepeatDataBodyPut":              "/v1beta1/repeat:bodyput",
	"Compliance.RepeatDataBodyPatch":            "/v1beta1/repeat:bodypatch",
}

type runner struct {
	client       *showcase.ComplianceClient
	endpoint     string
	timeout      time.Duration
	verbose      bool
	checkBinding bool
	rawPathRes   bool
	filter       *regexp.Regexp
	passed       int
	failed       int
	skipped      int
}

func main() {
	endpoint := flag.String("endpoint", "", "HTTP base URL of the server under test, e.g. http://127.0.0.1:7469 (required)")
	suitePath := flag.String("suite", "", "compliance suite JSON (default: the copy embedded in gapic-showcase v0.35.0, server/services/compliance_suite.json)")
	timeout := flag.Duration("timeout", 10*time.Second, "per-call timeout")
	verbose := flag.Bool("v", false, "print the echoed response of every case")
	checkBinding := flag.Bool("check-binding-uri", false, "also require response.binding_uri to equal the template of the binding used (the reference server fills it; Google's client-side tests do not check it)")
	enums := flag.Bool("enums", true, "run the GetEnum/VerifyEnum round-trip cases")
	extras := flag.Bool("extras", true, "run driver-defined cases for RPCs the suite JSON never lists (RepeatDataPathTrailingResource)")
	negative := flag.Bool("negative", false, "also run Google's server-strictness (negative) checks from compliance_suite_errors_test.go")
	rawPathRes := flag.Bool("no-binding-selection", false, "call RepeatDataPathResource exactly as the generated Go client does (main binding only; the suite's additional-binding case then fails against a correct server)")
	probe := flag.Bool("probe", false, "instead of the suite, send a few requests with values the suite lacks (NaN, Inf, bytes, unknown enum) and report how they round-trip; informational, never fails")
	run := flag.String("run", "", "only run cases whose line label matches this regexp")
	flag.Parse()

	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "usage: compliance-driver --endpoint http://127.0.0.1:PORT [--suite FILE] [--negative] [--check-binding-uri] [-v]")
		os.Exit(2)
	}

	suite, source, err := loadSuite(*suitePath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot load suite: %v\n", err)
		os.Exit(2)
	}

	ctx := context.Background()
	client, err := showcase.NewComplianceRESTClient(ctx,
		option.WithEndpoint(*endpoint),
		option.WithoutAuthentication())
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot create REST client: %v\n", err)
		os.Exit(2)
	}
	defer client.Close()

	r := &runner{client: client, endpoint: strings.TrimRight(*endpoint, "/"), timeout: *timeout, verbose: *verbose, checkBinding: *checkBinding, rawPathRes: *rawPathRes}
	if *run != "" {
		r.filter = regexp.MustCompile(*run)
	}

	if *probe {
		r.runProbe()
		return
	}
	fmt.Printf("# compliance-driver: endpoint %s, suite %s\n", *endpoint, source)
	start := time.Now()
	r.runSuite(suite)
	if *extras {
		r.runExtras()
	}
	if *enums {
		r.runEnums()
	}
	if *negative {
		r.runNegative(suite)
	}
	fmt.Printf("# %d passed, %d failed", r.passed, r.failed)
	if r.skipped > 0 {
		fmt.Printf(", %d skipped (--run filter)", r.skipped)
	}
	fmt.Printf(" (%.2fs)\n", time.Since(start).Seconds())
	if r.failed > 0 {
		os.Exit(1)
	}
}

// loadSuite returns the suite from path, or the copy gapic-showcase embeds (go:embed
// compliance_suite.json in server/services, parsed by that package's init()).
func loadSuite(path string) (*pb.ComplianceSuite, string, error) {
	if path == "" {
		if services.ComplianceSuiteStatus != services.ComplianceSuiteLoaded {
			return nil, "", errors.New(services.ComplianceSuiteStatusMessage)
		}
		return proto.Clone(services.ComplianceSuite).(*pb.ComplianceSuite), "embedded gapic-showcase v0.35.0 server/services/compliance_suite.json", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	suite := &pb.ComplianceSuite{}
	if err := protojson.Unmarshal(data, suite); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return suite, path, nil
}

func (r *runner) skip(label string) bool {
	if r.filter != nil && !r.filter.MatchString(label) {
		r.skipped++
		return true
	}
	return false
}

func (r *runner) pass(label, extra string) {
	r.passed++
	if extra != "" {
		fmt.Printf("PASS %s\n     %s\n", label, indent(extra))
	} else {
		fmt.Printf("PASS %s\n", label)
	}
}

func (r *runner) fail(label, format string, args ...interface{}) {
	r.failed++
	fmt.Printf("FAIL %s\n     %s\n", label, indent(fmt.Sprintf(format, args...)))
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n     ")
}

func (r *runner) methods() map[string]repeatMethod {
	c := r.client
	pathResource := r.pathResource
	if r.rawPathRes {
		pathResource = c.RepeatDataPathResource
	}
	return map[string]repeatMethod{
		"Compliance.RepeatDataBody":                 c.RepeatDataBody,
		"Compliance.RepeatDataBodyInfo":             c.RepeatDataBodyInfo,
		"Compliance.RepeatDataQuery":                c.RepeatDataQuery,
		"Compliance.RepeatDataSimplePath":           c.RepeatDataSimplePath,
		"Compliance.RepeatDataPathResource":         pathResource,
		"Compliance.RepeatDataPathTrailingResource": c.RepeatDataPathTrailingResource,
		"Compliance.RepeatDataBodyPut":              c.RepeatDataBodyPut,
		"Compliance.RepeatDataBodyPatch":            c.RepeatDataBodyPatch,
	}
}

// pathResource calls RepeatDataPathResource. The generated Go client (v0.35.0) only knows the
// rule's main binding (`...:pathresource`); it never chooses the additional_bindings entry
// (`...:childfirstpathresource`), which is why gapic-generator-go's own showcase test stubs this
// RPC out (wipMethod). To still exercise the server's additional binding, the driver chooses the
// binding the way the other generators do -- the first binding whose path variables fit the
// request -- and, for the additional one, overrides only the URL path with gax.WithPath (the
// generated client's own hook). Everything else (query string, headers, response decoding) stays the
// generated client's.
func (r *runner) pathResource(ctx context.Context, req *pb.RepeatRequest, opts ...gax.CallOption) (*pb.RepeatResponse, error) {
	info := req.GetInfo()
	fs, cs := info.GetFString(), info.GetFChild().GetFString()
	if !(strings.HasPrefix(fs, "first/") && strings.HasPrefix(cs, "second/")) &&
		strings.HasPrefix(cs, "first/") && strings.HasPrefix(fs, "second/") {
		path := fmt.Sprintf("/v1beta1/repeat/%v/%v/bool/%v:childfirstpathresource", cs, fs, info.GetFBool())
		if u, err := url.Parse(r.endpoint); err == nil {
			path = u.Path + path
		}
		opts = append(opts, gax.WithPath(path))
	}
	return r.client.RepeatDataPathResource(ctx, req, opts...)
}

func expectedBinding(rpc string, req *pb.RepeatRequest) string {
	if rpc == "Compliance.RepeatDataPathResource" {
		fs, cs := req.GetInfo().GetFString(), req.GetInfo().GetFChild().GetFString()
		if !(strings.HasPrefix(fs, "first/") && strings.HasPrefix(cs, "second/")) {
			return bindingURIs[rpc+"#1"]
		}
	}
	return bindingURIs[rpc]
}

func describeErr(err error) string {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return fmt.Sprintf("HTTP %d: %s\nresponse body: %s", gerr.Code, gerr.Message, strings.TrimSpace(gerr.Body))
	}
	return err.Error()
}

func (r *runner) checkRepeat(label, rpc string, method repeatMethod, want *pb.RepeatRequest) {
	if r.skip(label) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	sent := proto.Clone(want).(*pb.RepeatRequest)
	resp, err := method(ctx, sent)
	if err != nil {
		r.fail(label, "call error: %s", describeErr(err))
		return
	}
	if diff := cmp.Diff(want, resp.GetRequest(), protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
		r.fail(label, "echoed response.request differs from the request sent (-sent +echoed):\n%s", diff)
		return
	}
	extra := ""
	if r.checkBinding {
		if wantURI := expectedBinding(rpc, want); resp.GetBindingUri() != wantURI {
			r.fail(label, "binding_uri: got %q, want %q", resp.GetBindingUri(), wantURI)
			return
		}
	}
	if r.verbose {
		extra = "response: " + protojson.Format(resp)
	}
	r.pass(label, extra)
}

func (r *runner) runSuite(suite *pb.ComplianceSuite) {
	methods := r.methods()
	for _, group := range suite.GetGroup() {
		for reqIdx, request := range group.GetRequests() {
			for _, rpc := range group.GetRpcs() {
				label := fmt.Sprintf("[suite] group %q / request %d %q / %s", group.GetName(), reqIdx, request.GetName(), rpc)
				method, ok := methods[rpc]
				if !ok {
					if !r.skip(label) {
						r.fail(label, "the driver has no client method for RPC %q", rpc)
					}
					continue
				}
				r.checkRepeat(label, rpc, method, request)
			}
		}
	}
}

// runExtras covers RepeatDataPathTrailingResource, which is in the service (and in the maps of
// Google's tests) but which no suite group lists.
func (r *runner) runExtras() {
	cases := []*pb.RepeatRequest{
		{
			Name: "extra: trailing resource, one segment",
			Info: &pb.ComplianceData{FString: "first/hello", FChild: &pb.ComplianceDataChild{FString: "second/greetings"}, PBool: proto.Bool(true)},
		},
		{
			Name: "extra: trailing resource, several segments",
			Info: &pb.ComplianceData{FString: "first/hello", FInt32: 7, FKingdom: pb.ComplianceData_FUNGI,
				FChild: &pb.ComplianceDataChild{FString: "second/a/b/c", FDouble: 2.5}},
			FInt64: -5,
		},
	}
	rpc := "Compliance.RepeatDataPathTrailingResource"
	for i, c := range cases {
		label := fmt.Sprintf("[extra] request %d %q / %s", i, c.GetName(), rpc)
		r.checkRepeat(label, rpc, r.client.RepeatDataPathTrailingResource, c)
	}
}

// runEnums: GetEnum then VerifyEnum with the GetEnum response (known and unknown enum values).
func (r *runner) runEnums() {
	for _, unknown := range []bool{false, true} {
		label := fmt.Sprintf("[enum] GetEnum(unknown_enum=%t) -> VerifyEnum", unknown)
		if r.skip(label) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		got, err := r.client.GetEnum(ctx, &pb.EnumRequest{UnknownEnum: unknown})
		if err != nil {
			cancel()
			r.fail(label, "GetEnum error: %s", describeErr(err))
			continue
		}
		_, declared := pb.Continent_name[int32(got.GetContinent())]
		var problem string
		switch {
		case got.GetRequest().GetUnknownEnum() != unknown:
			problem = fmt.Sprintf("GetEnum response.request.unknown_enum = %t, want %t", got.GetRequest().GetUnknownEnum(), unknown)
		case !unknown && (!declared || got.GetContinent() == pb.Continent_CONTINENT_UNSPECIFIED):
			problem = fmt.Sprintf("GetEnum(unknown_enum=false) returned continent %d, want a declared non-zero Continent", got.GetContinent())
		case unknown && declared:
			problem = fmt.Sprintf("GetEnum(unknown_enum=true) returned continent %d (%s), want a value Continent does not declare", got.GetContinent(), got.GetContinent())
		}
		if problem != "" {
			cancel()
			r.fail(label, "%s", problem)
			continue
		}
		verified, err := r.client.VerifyEnum(ctx, got)
		cancel()
		if err != nil {
			r.fail(label, "VerifyEnum(continent=%d) error: %s", got.GetContinent(), describeErr(err))
			continue
		}
		// Compare values, not presence: for unknown_enum=false the client sends no
		// request.unknownEnum, so the echoed `request` sub-message may come back absent.
		if verified.GetContinent() != got.GetContinent() || verified.GetRequest().GetUnknownEnum() != unknown {
			r.fail(label, "VerifyEnum echoed %s, want %s", protojson.Format(verified), protojson.Format(got))
			continue
		}
		r.pass(label, fmt.Sprintf("continent %d", got.GetContinent()))
	}
}

// ---- negative (server strictness) checks: port of compliance_suite_errors_test.go ----

const apiClientHeader = "rest/0.0.0 gapic/0.0.0" // what resttools.PopulateRequestHeaders sends

// expectFailure issues a raw HTTP request and requires a non-200 answer. The reference server's
// error message contains a marker such as "(QueryParamsInvalidFieldError)"; its absence is
// reported but is not a failure (a different server may word its errors differently).
func (r *runner) expectFailure(label, verb, path, body, marker string) {
	if r.skip(label) {
		return
	}
	var rd io.Reader
	if verb != http.MethodGet {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(verb, r.endpoint+path, rd)
	if err != nil {
		r.fail(label, "cannot build request: %v", err)
		return
	}
	req.Header.Set("X-Goog-Api-Client", apiClientHeader)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.fail(label, "transport error: %v", err)
		return
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		r.fail(label, "got HTTP 200, want an error\n%s %s\nbody sent: %s\nanswer: %s", verb, path, body, data)
		return
	}
	note := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if !strings.Contains(string(data), marker) {
		note += fmt.Sprintf(" (answer lacks the reference server's marker %q)", marker)
	}
	r.pass(label, note)
}

func (r *runner) expectClientError(label string, method repeatMethod, req *pb.RepeatRequest, marker string) {
	if r.skip(label) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	resp, err := method(ctx, req)
	if err == nil {
		r.fail(label, "call succeeded, want an error; echoed %s", protojson.Format(resp))
		return
	}
	note := describeErr(err)
	if !strings.Contains(note, marker) {
		note += fmt.Sprintf("\n(answer lacks the reference server's marker %q)", marker)
	}
	r.pass(label, strings.SplitN(note, "\n", 2)[0])
}

func (r *runner) runNegative(suite *pb.ComplianceSuite) {
	camel := func(s string) string { // resttools.ToDottedLowerCamel
		parts := strings.Split(s, ".")
		for i, p := range parts {
			parts[i] = strcase.ToLowerCamel(p)
		}
		return strings.Join(parts, ".")
	}
	for _, group := range suite.GetGroup() {
		for reqIdx, orig := range group.GetRequests() {
			for _, rpc := range group.GetRpcs() {
				prefix := fmt.Sprintf("[negative] group %q / request %d %q / %s", group.GetName(), reqIdx, orig.GetName(), rpc)
				switch rpc {
				case "Compliance.RepeatDataBodyInfo":
					req := proto.Clone(orig).(*pb.RepeatRequest)
					body, _ := (protojson.MarshalOptions{EmitUnpopulated: true}).Marshal(req.GetInfo())
					q := queryString(req, nil, camel) // repeats info.* in the query: must be rejected
					r.expectFailure(prefix+" #InvalidFields", "POST", "/v1beta1/repeat:bodyinfo"+q, string(body), "(QueryParamsInvalidFieldError)")

					req = proto.Clone(orig).(*pb.RepeatRequest)
					req.Info.FString += "Compliance.RepeatDataBodyInfo#NegativeTestSnakeCasedFieldNames"
					body, _ = (protojson.MarshalOptions{EmitUnpopulated: true, UseProtoNames: true}).Marshal(req.GetInfo())
					r.expectFailure(prefix+" #SnakeCasedFieldNames", "POST", "/v1beta1/repeat:bodyinfo", string(body), "(BodyFieldNameIncorrectlyCasedError)")
				case "Compliance.RepeatDataQuery":
					req := proto.Clone(orig).(*pb.RepeatRequest)
					q := queryString(req, nil, strcase.ToSnake)
					r.expectFailure(prefix+" #SnakeCasedFieldNames", "GET", "/v1beta1/repeat:query"+q, "", "(QueryParameterNameIncorrectlyCasedError)")
				}
			}
		}
	}

	// TestComplianceSuiteUnexpectedFieldPresence, sent through the generated client.
	index, err := services.IndexComplianceSuite(suite)
	if err != nil {
		r.fail("[negative] index suite", "%v", err)
		return
	}
	presence := []struct {
		name, request, marker string
		modify                func(*pb.RepeatRequest)
	}{
		{"request not in suite (name changed)", "Zero values for all fields", "(ComplianceSuiteRequestNotFoundError)", func(q *pb.RepeatRequest) { q.Name = "modified name" }},
		{"set optional bool not sent", "Zero values for all fields", "(ComplianceSuiteRequestMismatchError)", func(q *pb.RepeatRequest) { q.Info.PBool = nil }},
		{"unset optional bool sent", "Basic types, no optional fields", "(ComplianceSuiteRequestMismatchError)", func(q *pb.RepeatRequest) { q.Info.PBool = proto.Bool(false) }},
		{"set optional string not sent", "Zero values for all fields", "(ComplianceSuiteRequestMismatchError)", func(q *pb.RepeatRequest) { q.Info.PString = nil }},
		{"unset optional string sent", "Basic types, no optional fields", "(ComplianceSuiteRequestMismatchError)", func(q *pb.RepeatRequest) { q.Info.PString = proto.String("") }},
		{"set optional int32 not sent", "Zero values for all fields", "(ComplianceSuiteRequestMismatchError)", func(q *pb.RepeatRequest) { q.Info.PInt32 = nil }},
		{"unset optional int32 sent", "Basic types, no optional fields", "(ComplianceSuiteRequestMismatchError)", func(q *pb.RepeatRequest) { q.Info.PInt32 = proto.Int32(0) }},
	}
	for _, p := range presence {
		base, ok := index[p.request]
		if !ok {
			r.fail("[negative] "+p.name, "suite has no request %q", p.request)
			continue
		}
		for _, m := range []struct {
			rpc    string
			method repeatMethod
		}{{"Compliance.RepeatDataBody", r.client.RepeatDataBody}, {"Compliance.RepeatDataQuery", r.client.RepeatDataQuery}} {
			req := proto.Clone(base).(*pb.RepeatRequest)
			p.modify(req)
			r.expectClientError(fmt.Sprintf("[negative] server_verify: %s / %s", p.name, m.rpc), m.method, req, p.marker)
		}
	}

	// VerifyEnum must reject a continent that is not the one GetEnum handed out.
	label := "[negative] VerifyEnum with a continent GetEnum did not return"
	if !r.skip(label) {
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		got, err := r.client.GetEnum(ctx, &pb.EnumRequest{})
		if err != nil {
			r.fail(label, "GetEnum error: %s", describeErr(err))
		} else {
			wrong := proto.Clone(got).(*pb.EnumResponse)
			wrong.Continent = pb.Continent((int32(got.GetContinent()) % 5) + 1) // another declared value
			if resp, err := r.client.VerifyEnum(ctx, wrong); err == nil {
				r.fail(label, "VerifyEnum(%d) succeeded after GetEnum returned %d; answer %s", wrong.Continent, got.Continent, protojson.Format(resp))
			} else {
				r.pass(label, strings.SplitN(describeErr(err), "\n", 2)[0])
			}
		}
		cancel()
	}
}

// queryString mirrors prepRepeatDataTestsQueryParams in compliance_suite_test.go (the hand-built
// query string of Google's server test), with a pluggable key caser.
func queryString(request *pb.RepeatRequest, exclude map[string]bool, caser func(string) string) string {
	info := request.GetInfo()
	params := []string{}
	add := func(key string, cond bool, value string) {
		if (exclude["info"] && strings.HasPrefix(key, "info.")) || exclude[key] || !cond {
			return
		}
		params = append(params, fmt.Sprintf("%s=%s", caser(key), value))
	}
	qe := url.QueryEscape
	add("server_verify", request.GetServerVerify(), "true")
	add("name", request.GetName() != "", qe(request.GetName()))
	add("intended_binding_uri", request.IntendedBindingUri != nil, qe(request.GetIntendedBindingUri()))
	add("f_int32", request.GetFInt32() != 0, fmt.Sprint(request.GetFInt32()))
	add("f_int64", request.GetFInt64() != 0, fmt.Sprint(request.GetFInt64()))
	add("f_double", request.GetFDouble() != 0, qe(fmt.Sprintf("%g", request.GetFDouble())))
	add("p_int32", request.PInt32 != nil, fmt.Sprint(request.GetPInt32()))
	add("p_int64", request.PInt64 != nil, fmt.Sprint(request.GetPInt64()))
	add("p_double", request.PDouble != nil, qe(fmt.Sprintf("%g", request.GetPDouble())))
	add("info.f_string", info.GetFString() != "", qe(info.GetFString()))
	add("info.f_int32", info.GetFInt32() != 0, fmt.Sprint(info.GetFInt32()))
	add("info.f_sint32", info.GetFSint32() != 0, fmt.Sprint(info.GetFSint32()))
	add("info.f_sfixed32", info.GetFSfixed32() != 0, fmt.Sprint(info.GetFSfixed32()))
	add("info.f_uint32", info.GetFUint32() != 0, fmt.Sprint(info.GetFUint32()))
	add("info.f_fixed32", info.GetFFixed32() != 0, fmt.Sprint(info.GetFFixed32()))
	add("info.f_int64", info.GetFInt64() != 0, fmt.Sprint(info.GetFInt64()))
	add("info.f_sint64", info.GetFSint64() != 0, fmt.Sprint(info.GetFSint64()))
	add("info.f_sfixed64", info.GetFSfixed64() != 0, fmt.Sprint(info.GetFSfixed64()))
	add("info.f_uint64", info.GetFUint64() != 0, fmt.Sprint(info.GetFUint64()))
	add("info.f_fixed64", info.GetFFixed64() != 0, fmt.Sprint(info.GetFFixed64()))
	add("info.f_double", info.GetFDouble() != 0, qe(fmt.Sprintf("%g", info.GetFDouble())))
	add("info.f_float", info.GetFFloat() != 0, qe(fmt.Sprintf("%g", info.GetFFloat())))
	add("info.f_bool", info.GetFBool(), "true")
	add("info.f_bytes", len(info.GetFBytes()) > 0, qe(string(info.GetFBytes())))
	add("info.f_kingdom", info.GetFKingdom() != pb.ComplianceData_LIFE_KINGDOM_UNSPECIFIED, info.GetFKingdom().String())
	add("info.p_string", info.PString != nil, qe(info.GetPString()))
	add("info.p_int32", info.PInt32 != nil, fmt.Sprint(info.GetPInt32()))
	add("info.p_double", info.PDouble != nil, qe(fmt.Sprintf("%g", info.GetPDouble())))
	add("info.p_bool", info.PBool != nil, fmt.Sprintf("%t", info.GetPBool()))
	add("info.p_kingdom", info.PKingdom != nil, info.GetPKingdom().String())
	add("info.f_child.f_string", info.GetFChild().GetFString() != "", qe(info.GetFChild().GetFString()))
	add("info.f_child.f_float", info.GetFChild().GetFFloat() != 0, qe(fmt.Sprintf("%g", info.GetFChild().GetFFloat())))
	add("info.f_child.f_double", info.GetFChild().GetFDouble() != 0, qe(fmt.Sprintf("%g", info.GetFChild().GetFDouble())))
	add("info.f_child.f_bool", info.GetFChild().GetFBool(), "true")
	if len(params) == 0 {
		return ""
	}
	return "?" + strings.Join(params, "&")
}

// runProbe shows how the generated client encodes values the suite does not contain. Not a test:
// the suite never sends these, and the reference server does not round-trip all of them.
func (r *runner) runProbe() {
	nan, inf := math.NaN(), math.Inf(1)
	req := &pb.RepeatRequest{
		Name: "probe",
		Info: &pb.ComplianceData{
			FString:  "a/b c+d%e&f=g?h#i",
			FDouble:  nan,
			FFloat:   float32(inf),
			PDouble:  proto.Float64(math.Inf(-1)),
			FBytes:   []byte("hi\x00\xff\xfe?"),
			FKingdom: pb.ComplianceData_LifeKingdom(99),
			FChild:   &pb.ComplianceDataChild{FContinent: pb.Continent_EUROPE, PContinent: pb.Continent(-7)},
		},
		FDouble: 1e-7,
		FInt64:  math.MinInt64,
	}
	for _, m := range []struct {
		name   string
		method repeatMethod
	}{
		{"RepeatDataBody", r.client.RepeatDataBody},
		{"RepeatDataQuery", r.client.RepeatDataQuery},
		{"RepeatDataSimplePath", r.client.RepeatDataSimplePath},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		resp, err := m.method(ctx, proto.Clone(req).(*pb.RepeatRequest))
		cancel()
		if err != nil {
			fmt.Printf("PROBE %s: error: %s\n", m.name, indent(describeErr(err)))
			continue
		}
		if diff := cmp.Diff(req, resp.GetRequest(), protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
			fmt.Printf("PROBE %s: echo differs (-sent +echoed):\n     %s\n", m.name, indent(diff))
		} else {
			fmt.Printf("PROBE %s: round-trips\n", m.name)
		}
	}
}
