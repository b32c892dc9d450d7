package dev.grpcops.fault;

/** A fault setting out of its bounds; {@link #field()} names it. */
public final class InvalidFaultException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String field;

    public InvalidFaultException(String field, String problem) {
        super(field + " " + problem);
        this.field = field;
    }

    /** The setting: {@code delay}, {@code stall}, {@code stall-every} or {@code error-ratio}. */
    public String field() {
        return field;
    }
}
