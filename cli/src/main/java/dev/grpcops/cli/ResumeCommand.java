package dev.grpcops.cli;

import dev.grpcops.proto.whoami.v1.DrainReply;
import dev.grpcops.proto.whoami.v1.DrainRequest;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;

@Command(
        name = "resume",
        mixinStandardHelpOptions = true,
        description = {
            "Puts a drained pod back into traffic: its grpcops.v1.WhoAmI health becomes SERVING.",
            "Needs GRPCOPS_ADMIN_TOKEN."
        })
final class ResumeCommand extends AdminCall {

    @Override
    BiFunction<WhoAmIGrpc.WhoAmIBlockingStub, DrainRequest, DrainReply> operation() {
        return WhoAmIGrpc.WhoAmIBlockingStub::resume;
    }
}
