# 服务在一个门店的每周排班（admin/slots/schedule.html）：生成时段的规则、替换规则的表单，以及保存的结果。

rules-title = 排班 · { $code }
rules-weekly-of = 每周排班：
rules-week-grid = 周视图
# 规则的星期代码（MON…SUN）显示为星期几；表单的值仍为代码。
rules-weekday = { $day ->
    [MON] 周一
    [TUE] 周二
    [WED] 周三
    [THU] 周四
    [FRI] 周五
    [SAT] 周六
    [SUN] 周日
   *[other] { $day }
}
# 同一条规则的各天之间（“周一、周二”）。
rules-day-sep = {"、"}

rules-saved = 排班已保存
rules-report = 未来 { $days } 天内：新生成 { $created } 个时段，删除 { $removed } 个，{ $changed } 个时段的名额有变化。
rules-kept-edited = 以下 { $n } 个时段的名额是手动设置的，保持不变；如需按新排班调整，请在时段页面修改：
rules-kept-booked = 以下 { $n } 个时段已不在排班中，但已有顾客预约，因此予以保留。请先致电通知顾客，再逐个取消预约或停约时段：
rules-n-booked = 已约 { $n } 人

rules-current = 当前规则
rules-none = 还没有排班规则：该服务在本门店没有按排班生成的时段。请在下方添加第一条规则。
rules-days = 星期
rules-opens = 开始
rules-closes = 结束
rules-slot-minutes = 时段（分钟）
rules-places-per-slot = 每个时段名额

rules-change = 修改排班
rules-change-explain = 保存后，该服务在本门店的全部排班规则都会被替换。新规则不再生成的空闲时段会被删除；已有预约的时段会保留，并在此列出。填写最后一行可添加规则；勾选“删除”可移除规则。
rules-anyone = 不指定员工
rules-remove = 删除
rules-save = 保存排班
# 前后包着指向员工页面的链接（sched-tab-staff）。
rules-staff-hint-lead = 如需为员工单独安排时段，请先在
rules-staff-hint-tail = 页面添加员工。
