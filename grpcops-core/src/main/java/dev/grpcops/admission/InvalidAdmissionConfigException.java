package dev.grpcops.admission;

/** Admission configuration that cannot work; {@link #field()} names the setting, relative to the admission prefix. */
public final class InvalidAdmissionConfigException extends IllegalArgumentException {

    private final String field;

    public InvalidAdmissionConfigException(String field, String message) {
        super(field + " " + message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
