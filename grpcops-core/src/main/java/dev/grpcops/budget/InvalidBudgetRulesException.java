package dev.grpcops.budget;

import dev.grpcops.InvalidSettingException;

/** Budget rules that cannot work; {@link #field()} names the rule ({@code reserve}, {@code default-budget}, …). */
public final class InvalidBudgetRulesException extends InvalidSettingException {

    private static final long serialVersionUID = 1L;

    public InvalidBudgetRulesException(String field, String message) {
        super(field, message);
    }
}
