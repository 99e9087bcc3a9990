package dev.runbus.testkit;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * An architecture rule over what a public API shows: no public or protected field, method or constructor of a
 * public class in the API's package names a type of the hidden packages, in its type, its return type or its
 * parameters, type arguments included. A dependency inside a method body is allowed: that is the API calling its
 * implementation; a type in a signature would make the implementation part of the API.
 */
public final class ApiSurface {

    private ApiSurface() {
    }

    public static ArchRule publicSignaturesOf(String apiPackage, String... hiddenPackages) {
        DescribedPredicate<JavaClass> hidden = JavaClass.Predicates.resideInAnyPackage(hiddenPackages);
        return classes().that().resideInAPackage(apiPackage).and().arePublic()
                .should(new ArchCondition<JavaClass>("show no type of " + String.join(", ", hiddenPackages)
                        + " in a public signature") {
                    @Override
                    public void check(JavaClass api, ConditionEvents events) {
                        for (JavaMember member : api.getMembers()) {
                            if (!visible(member)) {
                                continue;
                            }
                            for (JavaClass shown : typesShownBy(member)) {
                                if (hidden.test(shown)) {
                                    events.add(SimpleConditionEvent.violated(member,
                                            member.getFullName() + " shows " + shown.getName()));
                                }
                            }
                        }
                    }
                });
    }

    private static boolean visible(JavaMember member) {
        Set<JavaModifier> modifiers = member.getModifiers();
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static Set<JavaClass> typesShownBy(JavaMember member) {
        Set<JavaClass> types = new LinkedHashSet<>();
        if (member instanceof JavaField field) {
            types.addAll(field.getType().getAllInvolvedRawTypes());
        }
        if (member instanceof JavaCodeUnit code) {
            types.addAll(code.getReturnType().getAllInvolvedRawTypes());
            code.getParameterTypes().forEach(t -> types.addAll(t.getAllInvolvedRawTypes()));
        }
        return types;
    }
}
