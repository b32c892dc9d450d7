package dev.grpcops.stock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.grpcops.proto.chain.v1.CheckRequest;
import dev.grpcops.proto.chain.v1.SkuStats;
import dev.grpcops.proto.chain.v1.StatsReply;
import dev.grpcops.proto.chain.v1.StatsRequest;
import dev.grpcops.proto.chain.v1.StockGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import net.devh.boot.grpc.client.inject.GrpcClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Stats over every SKU, paged, over real gRPC (in-process). The tests share one table and only
 * add SKUs, so each asserts what holds whatever the others added.
 */
@SpringBootTest(
        properties = {
            "grpc.server.in-process-name=stock-paging-test",
            "grpc.server.port=-1",
            "grpc.client.stock.address=in-process:stock-paging-test",
            "management.server.port=-1",
            "grpcops.shutdown.drain-delay=0s",
        })
@Timeout(60)
class StatsPagingTests {

    private static final int FOUR_MIB = 4 * 1024 * 1024;

    @GrpcClient("stock")
    private StockGrpc.StockBlockingStub stock;

    @Autowired
    private CallLog log;

    @Test
    void pagesCoverEverySkuExactlyOnceInOrder() {
        for (int i = 0; i < 250; i++) {
            check("page-" + i);
        }

        List<StatsReply> pages = pageThrough(7);
        List<String> paged = pages.stream()
                .flatMap(p -> p.getSkusList().stream())
                .map(SkuStats::getSku)
                .toList();

        assertThat(paged)
                .isSorted()
                .doesNotHaveDuplicates()
                .containsAll(IntStream.range(0, 250).mapToObj(i -> "page-" + i).toList())
                .containsExactlyElementsOf(
                        log.all().stream().map(SkuStats::getSku).toList());
        assertThat(pages).allSatisfy(page -> assertThat(page.getSkusCount()).isBetween(1, 7));
        assertThat(pages.get(pages.size() - 1).getNextPageToken())
                .as("last page")
                .isEmpty();
        assertThat(pages.get(0).getSkus(0).getCalls())
                .as("stats, not just names")
                .isPositive();
    }

    @Test
    void pageSizeZeroIsTheDefaultAndTooLargeIsClamped() {
        for (int i = 0; i < StatsPaging.MAX_PAGE_SIZE + 50; i++) {
            log.record(String.format("clamp-%04d", i), null); // straight into the table: fast
        }
        StatsReply byDefault = stock.stats(StatsRequest.getDefaultInstance());
        assertThat(byDefault.getSkusCount()).isEqualTo(StatsPaging.DEFAULT_PAGE_SIZE);
        assertThat(byDefault.getNextPageToken()).isNotEmpty();

        StatsReply clamped = stock.stats(
                StatsRequest.newBuilder().setPageSize(Integer.MAX_VALUE).build());
        assertThat(clamped.getSkusCount()).isEqualTo(StatsPaging.MAX_PAGE_SIZE);
    }

    @Test
    void theLargestPagesStayWellUnderTheClientsFourMibLimit() {
        // The worst case: SKUs of 128 four-byte characters, each with the full 1000 samples.
        String name = "\uD83D\uDCE6".repeat(120);
        for (int i = 0; i < 300; i++) {
            String sku = name + String.format("big-%03d", i);
            for (int call = 0; call < 1000; call++) {
                log.record(sku, null);
            }
        }

        StatsReply defaultPage = stock.stats(StatsRequest.getDefaultInstance());
        assertThat(defaultPage.getSerializedSize()).isLessThan(1024 * 1024);

        List<StatsReply> largest = pageThrough(StatsPaging.MAX_PAGE_SIZE);
        assertThat(largest)
                .allSatisfy(page -> assertThat(page.getSerializedSize())
                        .isLessThanOrEqualTo(CallLog.MAX_PAGE_BYTES)
                        .isLessThan(FOUR_MIB));
        // Cut by bytes, not by count: 300 such SKUs (2.5 MB) do not fit one page of 1000.
        assertThat(largest.stream()
                        .filter(page -> page.getSkusList().stream()
                                .anyMatch(s -> s.getSku().startsWith(name))))
                .hasSizeGreaterThan(1);
        assertThat(largest.stream()
                        .mapToLong(page -> page.getSkusList().stream()
                                .filter(s -> s.getSku().startsWith(name))
                                .count())
                        .sum())
                .isEqualTo(300);
    }

    @ParameterizedTest
    @ValueSource(strings = {"not a token!", "czE6", "YWJj", "_w", "%%%"})
    void aMalformedTokenIsInvalidArgumentNamingIt(String token) {
        // "czE6" is the prefix with no SKU, "YWJj" valid base64 without the prefix, "_w" not UTF-8.
        StatusRuntimeException bad = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.stats(StatsRequest.newBuilder().setPageToken(token).build()));
        assertThat(bad.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(bad.getStatus().getDescription()).startsWith("page_token:");
    }

    @Test
    void aHugeTokenIsRefusedWithoutDecodingIt() {
        StatusRuntimeException bad = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.stats(StatsRequest.newBuilder()
                        .setPageToken("A".repeat(100_000))
                        .build()));
        assertThat(bad.getStatus().getDescription()).startsWith("page_token:");
    }

    @Test
    void aNegativePageSizeIsInvalidArgumentNamingIt() {
        StatusRuntimeException bad = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> stock.stats(StatsRequest.newBuilder().setPageSize(-1).build()));
        assertThat(bad.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(bad.getStatus().getDescription()).startsWith("page_size:");
    }

    @Test
    void aTokenStillWorksAfterItsSkuIsGone() {
        check("gone-a");
        check("gone-c");
        // A token after "gone-b", which was never recorded (as if evicted meanwhile).
        String token =
                Base64.getUrlEncoder().withoutPadding().encodeToString("s1:gone-b".getBytes(StandardCharsets.UTF_8));
        StatsReply next = stock.stats(
                StatsRequest.newBuilder().setPageSize(1).setPageToken(token).build());
        assertThat(next.getSkus(0).getSku()).isEqualTo("gone-c");
    }

    @Test
    void namingOneSkuIgnoresPaging() {
        check("one-sku");
        StatsReply reply = stock.stats(StatsRequest.newBuilder()
                .setSku("one-sku")
                .setPageSize(-1)
                .setPageToken("not a token!")
                .build());
        assertThat(reply.getSkusList()).extracting(SkuStats::getSku).containsExactly("one-sku");
        assertThat(reply.getNextPageToken()).isEmpty();
    }

    private List<StatsReply> pageThrough(int pageSize) {
        List<StatsReply> pages = new ArrayList<>();
        String token = "";
        do {
            StatsReply page = stock.withDeadlineAfter(10, TimeUnit.SECONDS)
                    .stats(StatsRequest.newBuilder()
                            .setPageSize(pageSize)
                            .setPageToken(token)
                            .build());
            pages.add(page);
            token = page.getNextPageToken();
            assertThat(pages).as("pages end").hasSizeLessThan(100_000);
        } while (!token.isEmpty());
        return pages;
    }

    private void check(String sku) {
        stock.withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(CheckRequest.newBuilder().setSku(sku).build());
    }
}
