package dev.grpcops;

/**
 * A setting of one of the library's features that cannot work, refused when the feature is built:
 * {@link #field()} names it, relative to the feature's settings ({@code reserve},
 * {@code levels.default.queues}, {@code delay}, …), so that a configuration layer (the Spring Boot
 * starter's properties, say) can name its own key for it. Each feature throws its own subclass.
 */
public abstract class InvalidSettingException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String field;

    protected InvalidSettingException(String field, String problem) {
        super(field + " " + problem);
        this.field = field;
    }

    /** The setting, relative to its feature's settings. */
    public String field() {
        return field;
    }
}
