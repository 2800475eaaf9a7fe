package com.example.docflowclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.docflow.api.v1.AddCounteragentToGroupRequest;
import com.docflow.api.v1.CounteragentServiceGrpc;
import com.docflow.api.v1.CreateCounteragentGroupRequest;
import com.docflow.api.v1.DeleteCounteragentGroupRequest;
import com.docflow.api.v1.GetCounteragentGroupRequest;
import com.docflow.api.v1.GetCounteragentGroupsRequest;
import com.docflow.api.v1.UpdateCounteragentGroupRequest;
import com.docflow.api.v1.DeleteRequest;
import com.docflow.api.v1.DocumentServiceGrpc;
import com.docflow.api.v1.GetCounteragentsFromGroupRequest;
import com.docflow.api.v1.GetSubscriptionsRequest;
import com.docflow.api.v1.RestoreRequest;
import com.docflow.api.v1.SubscriptionServiceGrpc;
import com.docflow.api.v1.UpdateSubscriptionsRequest;
import com.docflow.legacy.CounteragentFromGroupResponse;
import com.docflow.legacy.CounteragentGroup;
import com.docflow.legacy.CounteragentGroupToCreate;
import com.docflow.legacy.CounteragentGroupToUpdate;
import com.docflow.legacy.CounteragentGroupsList;
import com.docflow.legacy.DepartmentsInGroup;
import com.docflow.legacy.EmployeeSubscriptions;
import com.docflow.legacy.Subscription;
import com.docflow.legacy.SubscriptionsToUpdate;
import com.google.api.AnnotationsProto;
import com.google.api.HttpRule;
import com.google.protobuf.Any;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import com.google.protobuf.UninitializedMessageException;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Interop tests: a grpc-java client generated from proto/ by protobuf-maven-plugin (protoc +
 * protoc-gen-grpc-java) against a real docflow-api on a free port, over gRPC (h2c,
 * grpc-netty-shaded) and the legacy HTTP paths.
 *
 * <p>Run with {@code npm run test:interop:java} or {@code mvn -B verify} here. With DOCFLOW_URL
 * set, the tests use that server (with the demo data of {@code npm start}) instead of starting one.
 *
 * <p>Adding an RPC: add an entry to RPC_CASES (key: "package.Service/Method") and, when it has a
 * google.api.http rule, one to LEGACY_CASES (key: "VERB /path"). everyRpcHasACase fails, naming the
 * key, until both exist.
 */
class InteropTest {
  // The demo data the service loads when it starts with the embedded database.
  static final String BOX = "11111111-1111-4111-8111-111111111111";
  static final String EXPIRED_BOX = "33333333-3333-4333-8333-333333333333";
  static final String ADMIN_ID = "aaaaaaaa-0000-4000-8000-000000000001";
  static final String CLERK_ID = "aaaaaaaa-0000-4000-8000-000000000002";
  static final String ADMIN = "demo-admin-token";
  static final String CLERK = "demo-clerk-token";
  static final String DELETED_MESSAGE = "eeeeeeee-0000-4000-8000-000000000001";
  static final String DELETED_TEMPLATE = "eeeeeeee-0000-4000-8000-000000000002";
  static final String LIVE_MESSAGE = "eeeeeeee-0000-4000-8000-000000000003";
  static final String LIVE_SALES_DOC = "ffffffff-0000-4000-8000-000000000031";
  static final String LIVE_ACCOUNTS_DOC = "ffffffff-0000-4000-8000-000000000032";
  static final String PARTNERS = "99999999-0000-4000-8000-000000000001";
  static final String EMPTY_GROUP = "99999999-0000-4000-8000-000000000002";
  static final String DEFAULT_GROUP = "00000000-0000-0000-0000-000000000000";
  static final String SALES = "dddddddd-0000-4000-8000-000000000001";
  /** IsMyCounteragent in the default group; the group cases move it and put it back. */
  static final String MOVER = "cccccccc-0000-4000-8000-000000000011";
  /** IsInvitedByMe: cannot be moved into a group. */
  static final String INVITED = "cccccccc-0000-4000-8000-000000000012";

  // The service under test and the clients (set up in startServer).
  static String baseUrl;
  static Process server;
  static ManagedChannel channel;
  static final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  interface Case {
    void run() throws Exception;
  }

  // ---------------------------------------------------------------- the cases

  /** One entry per RPC of the docflow.api.v1 services, through the generated stubs. */
  static final Map<String, Case> RPC_CASES = new TreeMap<>();

  /** One entry per google.api.http rule, called as the existing SDKs do (binary protobuf). */
  static final Map<String, Case> LEGACY_CASES = new TreeMap<>();

  /** Creates a group with a name unique to the case and returns its id. */
  static String createGroup(String name) {
    var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
    CounteragentGroup group =
        stub.createCounteragentGroup(
            CreateCounteragentGroupRequest.newBuilder()
                .setBoxId(BOX)
                .setGroup(CounteragentGroupToCreate.newBuilder().setName(name))
                .build());
    assertEquals(name, group.getName());
    return group.getCounteragentGroupId();
  }

  // The counteragent-group family.
  static {
    RPC_CASES.put(
        "docflow.api.v1.CounteragentService/CreateCounteragentGroup",
        () -> {
          var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
          CounteragentGroup group =
              stub.createCounteragentGroup(
                  CreateCounteragentGroupRequest.newBuilder()
                      .setBoxId(BOX)
                      .setGroup(
                          CounteragentGroupToCreate.newBuilder()
                              .setName("Java: Sales partners")
                              .setDepartments(DepartmentsInGroup.newBuilder().addDepartmentIds(SALES)))
                      .build());
          assertEquals(List.of(SALES), group.getDepartments().getDepartmentIdsList());
          wantError(
              () ->
                  stub.createCounteragentGroup(
                      CreateCounteragentGroupRequest.newBuilder()
                          .setBoxId(BOX)
                          .setGroup(CounteragentGroupToCreate.newBuilder().setName("java: SALES PARTNERS"))
                          .build()),
              Status.Code.ALREADY_EXISTS,
              "ALREADY_EXISTS",
              "CounteragentGroup.DuplicateName");
        });
    RPC_CASES.put(
        "docflow.api.v1.CounteragentService/UpdateCounteragentGroup",
        () -> {
          var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
          String id = createGroup("Java: to rename");
          CounteragentGroup group =
              stub.updateCounteragentGroup(
                  UpdateCounteragentGroupRequest.newBuilder()
                      .setBoxId(BOX)
                      .setCounteragentGroupId(id)
                      .setChanges(CounteragentGroupToUpdate.newBuilder().setName("Java: renamed"))
                      .build());
          assertEquals("Java: renamed", group.getName());
          assertFalse(group.hasDepartments());
          wantError(
              () ->
                  stub.updateCounteragentGroup(
                      UpdateCounteragentGroupRequest.newBuilder()
                          .setBoxId(BOX)
                          .setCounteragentGroupId(DEFAULT_GROUP)
                          .setChanges(CounteragentGroupToUpdate.newBuilder().setName("Java: no"))
                          .build()),
              Status.Code.INVALID_ARGUMENT,
              "INVALID_ARGUMENT",
              "CounteragentGroup.DefaultGroup");
        });
    RPC_CASES.put(
        "docflow.api.v1.CounteragentService/DeleteCounteragentGroup",
        () -> {
          var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
          String id = createGroup("Java: to delete");
          stub.deleteCounteragentGroup(
              DeleteCounteragentGroupRequest.newBuilder().setBoxId(BOX).setCounteragentGroupId(id).build());
          wantError(
              () ->
                  stub.getCounteragentGroup(
                      GetCounteragentGroupRequest.newBuilder().setBoxId(BOX).setCounteragentGroupId(id).build()),
              Status.Code.NOT_FOUND,
              "NOT_FOUND",
              "CounteragentGroup.NotFound");
        });
    RPC_CASES.put(
        "docflow.api.v1.CounteragentService/GetCounteragentGroup",
        () -> {
          var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
          assertEquals(
              "Partners",
              stub.getCounteragentGroup(
                      GetCounteragentGroupRequest.newBuilder().setBoxId(BOX).setCounteragentGroupId(PARTNERS).build())
                  .getName());
          CounteragentGroup def =
              stub.getCounteragentGroup(
                  GetCounteragentGroupRequest.newBuilder().setBoxId(BOX).setCounteragentGroupId(DEFAULT_GROUP).build());
          assertEquals("Default", def.getName());
          assertFalse(def.hasDepartments());
        });
    RPC_CASES.put(
        "docflow.api.v1.CounteragentService/GetCounteragentGroups",
        () -> {
          var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
          CounteragentGroupsList list =
              stub.getCounteragentGroups(GetCounteragentGroupsRequest.newBuilder().setBoxId(BOX).build());
          assertTrue(list.hasTotalCount());
          assertEquals(list.getTotalCount(), list.getGroupsCount());
          CounteragentGroupsList past =
              stub.getCounteragentGroups(
                  GetCounteragentGroupsRequest.newBuilder().setBoxId(BOX).setPage(1000).build());
          assertEquals(0, past.getGroupsCount());
          assertTrue(past.hasTotalCount()); // proto2 required: on the wire also for an empty page
          assertEquals(list.getTotalCount(), past.getTotalCount());
        });
    RPC_CASES.put(
        "docflow.api.v1.CounteragentService/AddCounteragentToGroup",
        () -> {
          var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
          String id = createGroup("Java: movers");
          stub.addCounteragentToGroup(
              AddCounteragentToGroupRequest.newBuilder()
                  .setBoxId(BOX)
                  .setCounteragentBoxId(MOVER)
                  .setCounteragentGroupId(id)
                  .build());
          CounteragentFromGroupResponse page =
              stub.getCounteragentsFromGroup(
                  GetCounteragentsFromGroupRequest.newBuilder().setBoxId(BOX).setCounteragentGroupId(id).build());
          assertEquals(List.of(MOVER), page.getCounteragentBoxIdList());
          wantError(
              () ->
                  stub.addCounteragentToGroup(
                      AddCounteragentToGroupRequest.newBuilder()
                          .setBoxId(BOX)
                          .setCounteragentBoxId(INVITED)
                          .setCounteragentGroupId(id)
                          .build()),
              Status.Code.ALREADY_EXISTS,
              "ALREADY_EXISTS",
              "Counteragent.NotMyCounteragent");
          stub.addCounteragentToGroup(
              AddCounteragentToGroupRequest.newBuilder()
                  .setBoxId(BOX)
                  .setCounteragentBoxId(MOVER)
                  .setCounteragentGroupId(DEFAULT_GROUP)
                  .build());
        });
    LEGACY_CASES.put(
        "POST /CreateCounteragentGroup",
        () -> {
          byte[] body = CounteragentGroupToCreate.newBuilder().setName("Java legacy: created").build().toByteArray();
          CounteragentGroup group =
              legacy("POST", "/CreateCounteragentGroup", query("boxId", BOX), ADMIN, body, 200, null, CounteragentGroup.parser());
          assertFalse(group.hasDepartments());
          legacy("POST", "/CreateCounteragentGroup", query("boxId", BOX), ADMIN, body, 409, "CounteragentGroup.DuplicateName", null);
        });
    LEGACY_CASES.put(
        "POST /UpdateCounteragentGroup",
        () -> {
          String id = createGroup("Java legacy: to rename");
          byte[] body = CounteragentGroupToUpdate.newBuilder().setName("Java legacy: renamed").build().toByteArray();
          CounteragentGroup group =
              legacy("POST", "/UpdateCounteragentGroup", query("boxId", BOX, "counteragentGroupId", id), ADMIN, body, 200, null, CounteragentGroup.parser());
          assertEquals("Java legacy: renamed", group.getName());
        });
    LEGACY_CASES.put(
        "POST /DeleteCounteragentGroup",
        () -> {
          String id = createGroup("Java legacy: to delete");
          var q = query("boxId", BOX, "counteragentGroupId", id);
          legacy("POST", "/DeleteCounteragentGroup", q, ADMIN, null, 200, null, null);
          legacy("GET", "/GetCounteragentGroup", q, ADMIN, null, 404, "CounteragentGroup.NotFound", null);
        });
    LEGACY_CASES.put(
        "GET /GetCounteragentGroup",
        () -> {
          CounteragentGroup group =
              legacy("GET", "/GetCounteragentGroup", query("boxId", BOX, "counteragentGroupId", PARTNERS), ADMIN, null, 200, null, CounteragentGroup.parser());
          assertEquals("Partners", group.getName());
        });
    LEGACY_CASES.put(
        "GET /GetCounteragentGroups",
        () -> {
          CounteragentGroupsList list =
              legacy("GET", "/GetCounteragentGroups", query("boxId", BOX, "page", "1000"), ADMIN, null, 200, null, CounteragentGroupsList.parser());
          assertEquals(0, list.getGroupsCount());
          assertTrue(list.hasTotalCount());
        });
    LEGACY_CASES.put(
        "POST /AddCounteragentToGroup",
        () -> {
          String id = createGroup("Java legacy: movers");
          legacy("POST", "/AddCounteragentToGroup", query("boxId", BOX, "counteragentBoxId", MOVER, "counteragentGroupId", id), ADMIN, null, 200, null, null);
          legacy("POST", "/AddCounteragentToGroup", query("boxId", BOX, "counteragentBoxId", INVITED, "counteragentGroupId", id), ADMIN, null, 409, "Counteragent.NotMyCounteragent", null);
          legacy("POST", "/AddCounteragentToGroup", query("boxId", BOX, "counteragentBoxId", MOVER, "counteragentGroupId", DEFAULT_GROUP), ADMIN, null, 200, null, null);
        });
  }

  static {
    RPC_CASES.put(
        "docflow.api.v1.SubscriptionService/GetSubscriptions",
        () -> {
          var stub = as(ADMIN, SubscriptionServiceGrpc.newBlockingStub(channel));
          EmployeeSubscriptions res = stub.getSubscriptions(getSubscriptions(BOX, CLERK_ID));
          assertEquals(10, res.getSubscriptionsCount());
          for (Subscription s : res.getSubscriptionsList()) {
            assertTrue(s.hasIsSubscribed(), s.getId()); // proto2: always on the wire
          }
          wantError(
              () -> stub.getSubscriptions(getSubscriptions(EXPIRED_BOX, ADMIN_ID)),
              Status.Code.FAILED_PRECONDITION,
              "API_SUBSCRIPTION_ENDED",
              "Http.PaymentRequired");
          wantError(
              () -> stub.getSubscriptions(getSubscriptions(BOX, "no-such-user")),
              Status.Code.NOT_FOUND,
              "NOT_FOUND",
              "Employee.NotFound");
          wantError(
              () ->
                  SubscriptionServiceGrpc.newBlockingStub(channel)
                      .getSubscriptions(getSubscriptions(BOX, CLERK_ID)),
              Status.Code.UNAUTHENTICATED,
              "UNAUTHENTICATED",
              "Http.Unauthorized");
        });
    RPC_CASES.put(
        "docflow.api.v1.SubscriptionService/UpdateSubscriptions",
        () -> {
          var stub = as(CLERK, SubscriptionServiceGrpc.newBlockingStub(channel));
          EmployeeSubscriptions res =
              stub.updateSubscriptions(updateSubscriptions("ResolutionRequests", false));
          assertFalse(subscribed(res).get("ResolutionRequests"));
          wantError(
              () -> stub.updateSubscriptions(updateSubscriptions("NoSuchKind", true)),
              Status.Code.INVALID_ARGUMENT,
              "INVALID_ARGUMENT",
              "Subscriptions.UnknownId");
        });
    RPC_CASES.put(
        "docflow.api.v1.DocumentService/Restore",
        () -> {
          var stub = as(ADMIN, DocumentServiceGrpc.newBlockingStub(channel));
          var req = RestoreRequest.newBuilder().setBoxId(BOX).setMessageId(DELETED_MESSAGE).build();
          stub.restore(req);
          wantError(
              () -> stub.restore(req),
              Status.Code.ALREADY_EXISTS,
              "ALREADY_EXISTS",
              "Restore.AlreadyRestored");
          wantError(
              () -> stub.restore(req.toBuilder().setMessageId("no-such-message").build()),
              Status.Code.NOT_FOUND,
              "NOT_FOUND",
              "Message.NotFound");
          // Back to the demo state.
          stub.delete(
              DeleteRequest.newBuilder().setBoxId(BOX).setMessageId(DELETED_MESSAGE).build());
        });
    RPC_CASES.put(
        "docflow.api.v1.DocumentService/Delete",
        () -> {
          var stub = as(CLERK, DocumentServiceGrpc.newBlockingStub(channel));
          var req =
              DeleteRequest.newBuilder()
                  .setBoxId(BOX)
                  .setMessageId(LIVE_MESSAGE)
                  .setDocumentId(LIVE_SALES_DOC)
                  .build();
          stub.delete(req);
          wantError(
              () -> stub.delete(req),
              Status.Code.ALREADY_EXISTS,
              "ALREADY_EXISTS",
              "Delete.AlreadyDeleted");
          wantError(
              () -> stub.delete(req.toBuilder().setDocumentId(LIVE_ACCOUNTS_DOC).build()),
              Status.Code.PERMISSION_DENIED,
              "PERMISSION_DENIED",
              "Document.AccessDenied");
          stub.restore(
              RestoreRequest.newBuilder()
                  .setBoxId(BOX)
                  .setMessageId(LIVE_MESSAGE)
                  .setDocumentId(LIVE_SALES_DOC)
                  .build());
        });
    RPC_CASES.put(
        "docflow.api.v1.CounteragentService/GetCounteragentsFromGroup",
        () -> {
          var stub = as(ADMIN, CounteragentServiceGrpc.newBlockingStub(channel));
          List<String> all = new ArrayList<>();
          var req =
              GetCounteragentsFromGroupRequest.newBuilder()
                  .setBoxId(BOX)
                  .setCounteragentGroupId(PARTNERS)
                  .setCount(4);
          for (int i = 0; i < 10; i++) {
            CounteragentFromGroupResponse page = stub.getCounteragentsFromGroup(req.build());
            assertTrue(page.hasTotalCount());
            assertEquals(6, page.getTotalCount());
            if (page.getCounteragentBoxIdCount() == 0) {
              assertFalse(page.hasAfterIndexKey(), "an empty page carries an AfterIndexKey");
              break;
            }
            all.addAll(page.getCounteragentBoxIdList());
            req.setAfterIndexKey(page.getAfterIndexKey());
          }
          assertEquals(6, all.size());
          CounteragentFromGroupResponse empty =
              stub.getCounteragentsFromGroup(
                  req.clearAfterIndexKey().setCounteragentGroupId(EMPTY_GROUP).build());
          assertTrue(empty.hasTotalCount(), "TotalCount 0 is on the wire");
          assertEquals(0, empty.getTotalCount());
          wantError(
              () ->
                  stub.getCounteragentsFromGroup(
                      req.setCounteragentGroupId("no-such-group").build()),
              Status.Code.NOT_FOUND,
              "NOT_FOUND",
              "CounteragentGroup.NotFound");
          wantError(
              () ->
                  as(CLERK, CounteragentServiceGrpc.newBlockingStub(channel))
                      .getCounteragentsFromGroup(req.setCounteragentGroupId(PARTNERS).build()),
              Status.Code.PERMISSION_DENIED,
              "PERMISSION_DENIED",
              "Http.Forbidden");
        });

    LEGACY_CASES.put(
        "GET /GetSubscriptions",
        () -> {
          var q = query("boxId", BOX, "userId", CLERK_ID);
          var res =
              legacy("GET", "/GetSubscriptions", q, ADMIN, null, 200, null, EmployeeSubscriptions.parser());
          assertEquals(10, res.getSubscriptionsCount());
          legacy("GET", "/GetSubscriptions", q, null, null, 401, "Http.Unauthorized", null);
          legacy(
              "GET",
              "/GetSubscriptions",
              query("boxId", EXPIRED_BOX, "userId", ADMIN_ID),
              ADMIN,
              null,
              402,
              "Http.PaymentRequired",
              null);
          legacy("GET", "/GetSubscriptions", query("boxId", BOX), ADMIN, null, 400, "Http.BadRequest", null);
        });
    LEGACY_CASES.put(
        "POST /UpdateSubscriptions",
        () -> {
          var q = query("boxId", BOX, "userId", CLERK_ID);
          var change = subscription("EmployeeRequests", false);
          var res =
              legacy(
                  "POST",
                  "/UpdateSubscriptions",
                  q,
                  CLERK,
                  SubscriptionsToUpdate.newBuilder().addSubscriptions(change).build().toByteArray(),
                  200,
                  null,
                  EmployeeSubscriptions.parser());
          assertFalse(subscribed(res).get("EmployeeRequests"));
          legacy(
              "POST",
              "/UpdateSubscriptions",
              q,
              CLERK,
              SubscriptionsToUpdate.newBuilder()
                  .addSubscriptions(change)
                  .addSubscriptions(change)
                  .build()
                  .toByteArray(),
              400,
              "Subscriptions.DuplicateId",
              null);
        });
    LEGACY_CASES.put(
        "POST /Restore",
        () -> {
          var q = query("boxId", BOX, "messageId", DELETED_TEMPLATE);
          legacy("POST", "/Restore", q, ADMIN, null, 200, null, null);
          legacy("POST", "/Restore", q, ADMIN, null, 409, "Restore.AlreadyRestored", null);
          legacy("GET", "/Restore", q, ADMIN, null, 405, "Http.MethodNotAllowed", null);
          legacy("POST", "/Delete", q, ADMIN, null, 200, null, null);
        });
    LEGACY_CASES.put(
        "POST /Delete",
        () -> {
          var q = query("boxId", BOX, "messageId", LIVE_MESSAGE, "documentId", LIVE_ACCOUNTS_DOC);
          legacy("POST", "/Delete", q, ADMIN, null, 200, null, null);
          legacy("POST", "/Delete", q, ADMIN, null, 409, "Delete.AlreadyDeleted", null);
          legacy("POST", "/Delete", q, CLERK, null, 403, "Document.AccessDenied", null);
          legacy("POST", "/Restore", q, ADMIN, null, 200, null, null);
        });
    LEGACY_CASES.put(
        "GET /GetCounteragentsFromGroup",
        () -> {
          var q = query("boxId", BOX, "counteragentGroupId", PARTNERS, "count", "4");
          var first =
              legacy(
                  "GET",
                  "/GetCounteragentsFromGroup",
                  q,
                  ADMIN,
                  null,
                  200,
                  null,
                  CounteragentFromGroupResponse.parser());
          assertEquals(4, first.getCounteragentBoxIdCount());
          assertEquals(6, first.getTotalCount());
          assertTrue(first.hasAfterIndexKey());
          q.put("afterIndexKey", first.getAfterIndexKey());
          var second =
              legacy(
                  "GET",
                  "/GetCounteragentsFromGroup",
                  q,
                  ADMIN,
                  null,
                  200,
                  null,
                  CounteragentFromGroupResponse.parser());
          assertEquals(2, second.getCounteragentBoxIdCount());
          q.remove("afterIndexKey");
          q.put("counteragentGroupId", "no-such-group");
          legacy(
              "GET",
              "/GetCounteragentsFromGroup",
              q,
              ADMIN,
              null,
              404,
              "CounteragentGroup.NotFound",
              null);
        });
  }

  @TestFactory
  Stream<DynamicTest> rpcs() {
    return RPC_CASES.entrySet().stream()
        .map(e -> DynamicTest.dynamicTest(e.getKey(), () -> e.getValue().run()));
  }

  @TestFactory
  Stream<DynamicTest> legacyPaths() {
    return LEGACY_CASES.entrySet().stream()
        .map(e -> DynamicTest.dynamicTest(e.getKey(), () -> e.getValue().run()));
  }

  /**
   * Every RPC of the generated docflow.api.v1 code has a case, and so has every legacy path of a
   * google.api.http rule. The descriptor set is the one protoc wrote while generating the code.
   */
  @Test
  void everyRpcHasACase() throws Exception {
    ExtensionRegistry registry = ExtensionRegistry.newInstance();
    AnnotationsProto.registerAllExtensions(registry);
    FileDescriptorSet set =
        FileDescriptorSet.parseFrom(
            Files.readAllBytes(
                Path.of("target/generated-resources/protobuf/descriptor-sets/docflow.protoset")),
            registry);
    List<String> missing = new ArrayList<>();
    int methods = 0;
    for (FileDescriptorProto file : set.getFileList()) {
      if (!file.getPackage().equals("docflow.api.v1")) {
        continue;
      }
      for (ServiceDescriptorProto service : file.getServiceList()) {
        for (MethodDescriptorProto method : service.getMethodList()) {
          methods++;
          String name = "docflow.api.v1." + service.getName() + "/" + method.getName();
          if (!RPC_CASES.containsKey(name)) {
            missing.add("RPC_CASES: " + name);
          }
          if (method.getOptions().hasExtension(AnnotationsProto.http)) {
            String path = legacyKey(method.getOptions().getExtension(AnnotationsProto.http));
            if (!LEGACY_CASES.containsKey(path)) {
              missing.add("LEGACY_CASES: " + path + " (" + name + ")");
            }
          }
        }
      }
    }
    assertTrue(methods > 0, "no RPC found in the descriptor set");
    assertEquals(List.of(), missing, "RPCs without a case");
  }

  /**
   * The classes of com.google.rpc, com.google.api and io.grpc.health.v1 are the upstream ones
   * (proto-google-common-protos, grpc-services), not generated from our copies: a cut-down copy of
   * error_details.proto would make RetryInfo.getDescriptor() fail with NoSuchFieldError.
   */
  @Test
  void upstreamTypesAreNotShadowed() {
    assertEquals("google.rpc.RetryInfo", RetryInfo.getDescriptor().getFullName());
    assertEquals("retry_delay", RetryInfo.getDescriptor().getFields().get(0).getName());
    assertNotNull(ErrorInfo.getDescriptor().findFieldByName("metadata"));
    assertTrue(jarOf(ErrorInfo.class).contains("proto-google-common-protos"), jarOf(ErrorInfo.class));
    assertTrue(jarOf(HttpRule.class).contains("proto-google-common-protos"), jarOf(HttpRule.class));
    assertTrue(jarOf(HealthGrpc.class).contains("grpc-services"), jarOf(HealthGrpc.class));
    for (String generated : List.of("com/google", "io/grpc")) {
      assertFalse(
          new File("target/classes/" + generated).exists(),
          "target/classes/" + generated + " was generated from our copies");
    }
  }

  @Test
  void healthWithUpstreamTypes() {
    var health = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    for (String service : List.of("", "docflow.api.v1.SubscriptionService")) {
      HealthCheckResponse res =
          health.check(HealthCheckRequest.newBuilder().setService(service).build());
      assertEquals(HealthCheckResponse.ServingStatus.SERVING, res.getStatus(), service);
    }
  }

  /**
   * Proto2 required fields: build() throws UninitializedMessageException, so does the convenience
   * setter that takes a builder; buildPartial() lets the message out, and the service says 400.
   */
  @Test
  void requiredFieldsAreCheckedBeforeSending() throws Exception {
    Subscription.Builder incomplete = Subscription.newBuilder().setId("News");
    assertThrows(UninitializedMessageException.class, incomplete::build);
    assertThrows(
        UninitializedMessageException.class,
        () -> SubscriptionsToUpdate.newBuilder().addSubscriptions(incomplete));
    var partial =
        SubscriptionsToUpdate.newBuilder().addSubscriptions(incomplete.buildPartial()).buildPartial();
    assertThrows(
        UninitializedMessageException.class,
        () -> UpdateSubscriptionsRequest.newBuilder().setSubscriptions(partial).build());
    assertFalse(partial.isInitialized());
    legacy(
        "POST",
        "/UpdateSubscriptions",
        query("boxId", BOX, "userId", CLERK_ID),
        CLERK,
        partial.toByteArray(),
        400,
        "Http.BadRequest",
        null);
    wantError(
        () ->
            as(CLERK, SubscriptionServiceGrpc.newBlockingStub(channel))
                .updateSubscriptions(
                    UpdateSubscriptionsRequest.newBuilder()
                        .setBoxId(BOX)
                        .setUserId(CLERK_ID)
                        .setSubscriptions(partial)
                        .buildPartial()),
        Status.Code.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "Http.BadRequest");
  }

  /** The example client (src/main/java, shown in docs/clients.md) runs as it is. */
  @Test
  void example() throws Exception {
    var buffer = new ByteArrayOutputStream();
    Example.run(baseUrl, new PrintStream(buffer, true, StandardCharsets.UTF_8));
    String out = buffer.toString(StandardCharsets.UTF_8);
    for (String want :
        List.of(
            "gRPC GetSubscriptions: 10 subscriptions",
            "legacy GetCounteragentsFromGroup: 4 of 6",
            "ErrorInfo reason=API_SUBSCRIPTION_ENDED domain=docflow-api errorCode=Http.PaymentRequired")) {
      assertTrue(out.contains(want), "example output lacks \"" + want + "\":\n" + out);
    }
  }

  // ---------------------------------------------------------------- helpers

  static <S extends AbstractStub<S>> S as(String token, S stub) {
    Metadata headers = new Metadata();
    headers.put(Example.AUTHORIZATION, Example.authorization(token));
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
        .withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  static GetSubscriptionsRequest getSubscriptions(String box, String user) {
    return GetSubscriptionsRequest.newBuilder().setBoxId(box).setUserId(user).build();
  }

  static Subscription subscription(String id, boolean subscribed) {
    return Subscription.newBuilder().setId(id).setIsSubscribed(subscribed).build();
  }

  static UpdateSubscriptionsRequest updateSubscriptions(String id, boolean subscribed) {
    return UpdateSubscriptionsRequest.newBuilder()
        .setBoxId(BOX)
        .setUserId(CLERK_ID)
        .setSubscriptions(
            SubscriptionsToUpdate.newBuilder().addSubscriptions(subscription(id, subscribed)))
        .build();
  }

  static Map<String, Boolean> subscribed(EmployeeSubscriptions res) {
    return res.getSubscriptionsList().stream()
        .collect(Collectors.toMap(Subscription::getId, Subscription::getIsSubscribed));
  }

  /** The gRPC status code and the google.rpc.ErrorInfo detail of a failed call. */
  static void wantError(Case call, Status.Code code, String reason, String errorCode)
      throws Exception {
    try {
      call.run();
    } catch (StatusRuntimeException e) {
      assertEquals(code, e.getStatus().getCode(), e.toString());
      com.google.rpc.Status status = StatusProto.fromThrowable(e);
      assertNotNull(status, "no grpc-status-details-bin");
      for (Any detail : status.getDetailsList()) {
        if (detail.is(ErrorInfo.class)) {
          ErrorInfo info = detail.unpack(ErrorInfo.class);
          assertEquals(reason, info.getReason());
          assertEquals("docflow-api", info.getDomain());
          assertEquals(errorCode, info.getMetadataOrDefault("errorCode", ""));
          return;
        }
      }
      fail("no google.rpc.ErrorInfo among " + status.getDetailsList());
    }
    fail("no error, want " + code);
  }

  static Map<String, String> query(String... pairs) {
    Map<String, String> q = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      q.put(pairs[i], pairs[i + 1]);
    }
    return q;
  }

  /**
   * Calls a legacy path with a protobuf body (null: none) and checks the status and, for an error,
   * X-Service-ErrorCode and the text body; a 200 is parsed (a missing required field throws).
   */
  static <T extends Message> T legacy(
      String method,
      String path,
      Map<String, String> query,
      String token,
      byte[] body,
      int wantStatus,
      String wantErrorCode,
      Parser<T> parser)
      throws Exception {
    String q =
        query.entrySet().stream()
            .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    HttpRequest.Builder req =
        HttpRequest.newBuilder(URI.create(baseUrl + path + "?" + q))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(body));
    if (token != null) {
      req.header("Authorization", Example.authorization(token));
    }
    HttpResponse<byte[]> res = http.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
    String text = new String(res.body(), StandardCharsets.UTF_8);
    assertEquals(wantStatus, res.statusCode(), method + " " + path + ": " + text);
    if (wantStatus != 200) {
      assertEquals(wantErrorCode, res.headers().firstValue("X-Service-ErrorCode").orElse(null));
      assertTrue(res.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
      assertFalse(text.isEmpty());
      return null;
    }
    if (parser == null) {
      assertEquals(0, res.body().length, method + " " + path + ": body " + text);
      return null;
    }
    assertEquals("application/x-protobuf", res.headers().firstValue("Content-Type").orElse(""));
    try {
      return parser.parseFrom(res.body());
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError(method + " " + path + ": " + e.getMessage(), e);
    }
  }

  static String legacyKey(HttpRule rule) {
    switch (rule.getPatternCase()) {
      case GET:
        return "GET " + rule.getGet();
      case POST:
        return "POST " + rule.getPost();
      case PUT:
        return "PUT " + rule.getPut();
      case DELETE:
        return "DELETE " + rule.getDelete();
      case PATCH:
        return "PATCH " + rule.getPatch();
      case CUSTOM:
        return rule.getCustom().getKind() + " " + rule.getCustom().getPath();
      default:
        return "?";
    }
  }

  static String jarOf(Class<?> type) {
    return String.valueOf(type.getProtectionDomain().getCodeSource().getLocation());
  }

  // ---------------------------------------------------------------- the server

  /**
   * Starts the service as npm start does it, on a free port with the embedded database and the
   * demo data, unless DOCFLOW_URL names one.
   */
  @BeforeAll
  static void startServer() throws Exception {
    baseUrl = System.getenv("DOCFLOW_URL");
    if (baseUrl == null || baseUrl.isEmpty()) {
      ProcessBuilder pb =
          new ProcessBuilder("node", "--import", "tsx", "src/main.ts")
              .directory(new File("../../..").getCanonicalFile())
              .redirectOutput(ProcessBuilder.Redirect.DISCARD);
      // The embedded database and the demo data, whatever the caller's environment says.
      pb.environment().keySet().removeAll(List.of("MONGODB_URI", "MONGODB_DB", "SEED_FILE"));
      pb.environment().put("HOST", "127.0.0.1");
      pb.environment().put("PORT", "0");
      pb.environment().put("LOG_LEVEL", "warn");
      server = pb.start();
      BufferedReader stderr =
          new BufferedReader(
              new InputStreamReader(server.getErrorStream(), StandardCharsets.UTF_8));
      Pattern listening = Pattern.compile("listening on (http://\\S+)");
      StringBuilder seen = new StringBuilder();
      for (String line = stderr.readLine(); line != null; line = stderr.readLine()) {
        seen.append(line).append('\n');
        Matcher m = listening.matcher(line);
        if (m.find()) {
          baseUrl = m.group(1);
          break;
        }
      }
      if (baseUrl == null) {
        server.destroyForcibly();
        fail("the service did not start:\n" + seen);
      }
      Thread drain =
          new Thread(
              () -> {
                try {
                  stderr.transferTo(java.io.Writer.nullWriter());
                } catch (Exception ignored) {
                  // the service stopped
                }
              });
      drain.setDaemon(true);
      drain.start();
    }
    channel =
        ManagedChannelBuilder.forTarget(URI.create(baseUrl).getAuthority()).usePlaintext().build();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.destroy(); // SIGTERM
      assertTrue(server.waitFor(20, TimeUnit.SECONDS), "the service did not stop");
      assertEquals(0, server.exitValue(), "the service's exit code");
    }
  }
}
