package dev.grpcops.deadline;

/** Budget rules that cannot work; {@link #field()} names the rule ({@code reserve}, {@code default-budget}, …). */
public final class InvalidBudgetRulesException extends IllegalArgumentException {

    private final String field;

    public InvalidBudgetRulesException(String field, String message) {
        super(field + " " + message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
