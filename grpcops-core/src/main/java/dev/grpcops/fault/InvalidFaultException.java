package dev.grpcops.fault;

import dev.grpcops.InvalidSettingException;

/** A fault setting out of its bounds; {@link #field()} names it: {@code delay}, {@code stall}, {@code stall-every} or {@code error-ratio}. */
public final class InvalidFaultException extends InvalidSettingException {

    private static final long serialVersionUID = 1L;

    public InvalidFaultException(String field, String problem) {
        super(field, problem);
    }
}
