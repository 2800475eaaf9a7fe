package com.example.docflowclient;

import com.docflow.api.v1.GetSubscriptionsRequest;
import com.docflow.api.v1.SubscriptionServiceGrpc;
import com.docflow.legacy.CounteragentFromGroupResponse;
import com.docflow.legacy.EmployeeSubscriptions;
import com.docflow.legacy.Subscription;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;

/**
 * A small docflow-api client in Java: GetSubscriptions over gRPC (h2c, grpc-netty-shaded),
 * GetCounteragentsFromGroup over the legacy HTTP path (binary protobuf, as the existing SDKs call
 * it), and the google.rpc.ErrorInfo of a failed call.
 *
 * <p>Start the service (npm start), then: {@code mvn -q compile exec:java
 * -Dexec.args=http://127.0.0.1:8080}
 */
public final class Example {
  // The demo data of `npm start` (docs/configuration.md, "Demo data and credentials").
  static final String API_KEY = "demo-api-key";
  static final String ADMIN_TOKEN = "demo-admin-token";
  static final String BOX = "11111111-1111-4111-8111-111111111111";
  static final String EXPIRED_BOX = "33333333-3333-4333-8333-333333333333";
  static final String ADMIN = "aaaaaaaa-0000-4000-8000-000000000001";
  static final String CLERK = "aaaaaaaa-0000-4000-8000-000000000002";
  static final String PARTNERS = "99999999-0000-4000-8000-000000000001";

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private Example() {}

  public static void main(String[] args) throws Exception {
    run(args.length > 0 ? args[0] : "http://127.0.0.1:8080", System.out);
  }

  static String authorization(String token) {
    return "ServiceAuth svcauth_api_client_id=" + API_KEY + ", svcauth_token=" + token;
  }

  static void run(String baseUrl, PrintStream out) throws IOException, InterruptedException {
    // gRPC over cleartext HTTP/2 to host:port; the header travels as the metadata
    // "authorization".
    ManagedChannel channel =
        ManagedChannelBuilder.forTarget(URI.create(baseUrl).getAuthority()).usePlaintext().build();
    try {
      Metadata headers = new Metadata();
      headers.put(AUTHORIZATION, authorization(ADMIN_TOKEN));
      SubscriptionServiceGrpc.SubscriptionServiceBlockingStub subscriptions =
          SubscriptionServiceGrpc.newBlockingStub(channel)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
              .withDeadlineAfter(30, TimeUnit.SECONDS);

      EmployeeSubscriptions got =
          subscriptions.getSubscriptions(
              GetSubscriptionsRequest.newBuilder().setBoxId(BOX).setUserId(CLERK).build());
      out.printf("gRPC GetSubscriptions: %d subscriptions%n", got.getSubscriptionsCount());
      for (Subscription s : got.getSubscriptionsList()) {
        out.printf("  %s subscribed=%b%n", s.getId(), s.getIsSubscribed());
      }

      // The legacy path: GET with query parameters, no Accept header, binary protobuf back.
      // parseFrom throws if a required field is missing.
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpRequest request =
          HttpRequest.newBuilder(
                  URI.create(
                      baseUrl
                          + "/GetCounteragentsFromGroup?boxId="
                          + BOX
                          + "&counteragentGroupId="
                          + PARTNERS
                          + "&count=4"))
              .header("Authorization", authorization(ADMIN_TOKEN))
              .GET()
              .build();
      HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        throw new IOException(
            "GetCounteragentsFromGroup: "
                + response.statusCode()
                + " "
                + response.headers().firstValue("X-Service-ErrorCode").orElse("")
                + ": "
                + new String(response.body(), java.nio.charset.StandardCharsets.UTF_8));
      }
      CounteragentFromGroupResponse page = CounteragentFromGroupResponse.parseFrom(response.body());
      out.printf(
          "legacy GetCounteragentsFromGroup: %d of %d, next afterIndexKey \"%s\"%n",
          page.getCounteragentBoxIdCount(), page.getTotalCount(), page.getAfterIndexKey());

      // A failed call: the box's API subscription has ended. The status carries a
      // google.rpc.ErrorInfo (com.google.rpc from proto-google-common-protos).
      try {
        subscriptions.getSubscriptions(
            GetSubscriptionsRequest.newBuilder().setBoxId(EXPIRED_BOX).setUserId(ADMIN).build());
        throw new IllegalStateException("GetSubscriptions on the expired box: no error");
      } catch (StatusRuntimeException e) {
        out.printf("gRPC error: %s: %s%n", e.getStatus().getCode(), e.getStatus().getDescription());
        com.google.rpc.Status status = StatusProto.fromThrowable(e);
        for (Any detail : status == null ? java.util.List.<Any>of() : status.getDetailsList()) {
          if (detail.is(ErrorInfo.class)) {
            ErrorInfo info = unpack(detail);
            out.printf(
                "  ErrorInfo reason=%s domain=%s errorCode=%s%n",
                info.getReason(), info.getDomain(), info.getMetadataOrDefault("errorCode", ""));
          }
        }
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static ErrorInfo unpack(Any detail) {
    try {
      return detail.unpack(ErrorInfo.class);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }
}
