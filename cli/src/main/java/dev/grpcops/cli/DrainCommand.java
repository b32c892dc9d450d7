package dev.grpcops.cli;

import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;

@Command(
        name = "drain",
        mixinStandardHelpOptions = true,
        description = {
            "Takes one pod out of traffic: its grpcops.v1.WhoAmI health becomes NOT_SERVING.",
            "The process keeps running. Needs GRPCOPS_ADMIN_TOKEN."
        })
final class DrainCommand extends AdminCall {

    @Override
    BiFunction<WhoAmIGrpc.WhoAmIBlockingStub, DrainRequest, DrainReply> operation() {
        return WhoAmIGrpc.WhoAmIBlockingStub::drain;
    }
}
